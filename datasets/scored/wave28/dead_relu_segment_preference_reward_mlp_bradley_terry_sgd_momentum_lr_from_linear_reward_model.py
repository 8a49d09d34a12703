"""Reward model learned from pairwise preferences over trajectory segments (Christiano et al. 2017).

Data: a synthetic navigation task; each state is a vector of non-negative sensor features
(landmark-proximity bumps, range-finder distances, battery level) -- all >= 0.  Segment pairs
(length L) are labelled by a simulated annotator with Bradley-Terry probabilities from the hidden
true return.  Model: r(s) = one-hidden-layer ReLU MLP with the output layer zero-initialised (so
the model starts at 50/50 preferences); segment score = sum_t r(s_t); loss = BCE-with-logits on
score_A - score_B (the Bradley-Terry likelihood).

Mechanism: the team's previous reward model was linear on the same features and was trained with
SGD(momentum 0.9) at lr ~0.2; that lr was kept for the MLP.  Every input is non-negative and the
score sums L steps, so one SGD step changes a hidden unit's pre-activation by roughly
lr * delta * L * ||x||^2 with the same sign for every state.  Within the first ~20 steps the
updates overshoot back and forth and every hidden unit ends up with a negative pre-activation for
every state: r(s) becomes a constant, score_A - score_B is exactly zero (a constant cancels in the
difference, so not even the output bias can help), the loss sits at log 2 and all gradients are
exactly zero -- the loss is flat for the rest of the run.  No value is ever non-finite.

ORIGIN: "reward_net.0", the hidden Linear whose ReLU units die.

Fix: a learning rate suited to the MLP (SGD momentum lr = 0.01); same model, data and schedule.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "reward_net.0"
SOURCE = ("Dying ReLU with an oversized learning rate (CS231n notes: 'as much as 40% of your "
          "network can be dead if the learning rate is set too high'); preference-based reward "
          "learning, Christiano et al. 2017 'Deep RL from Human Preferences'")


class SegmentRewardModel(nn.Module):
    def __init__(self, obs_dim, width):
        super().__init__()
        self.reward_net = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU(),
                                        nn.Linear(width, 1))
        # common reward-model practice: start from r(s) = 0 so the first preferences are 50/50
        nn.init.zeros_(self.reward_net[2].weight)
        nn.init.zeros_(self.reward_net[2].bias)

    def forward(self, seg_a, seg_b):
        ra = self.reward_net(seg_a).squeeze(-1).sum(-1)
        rb = self.reward_net(seg_b).squeeze(-1).sum(-1)
        return ra - rb


def _segments(n, L, g, obs_dim, w_true, centres):
    pos = torch.rand(n, 1, 2, generator=g) * 4
    vel = torch.randn(n, 1, 2, generator=g) * 0.3
    t = torch.arange(L).view(1, L, 1).float()
    traj = pos + vel * t + 0.05 * torch.randn(n, L, 2, generator=g).cumsum(1)
    d = ((traj.unsqueeze(2) - centres.view(1, 1, -1, 2)) ** 2).sum(-1)
    bumps = torch.exp(-d)                                   # proximity to landmarks, >= 0
    ranges = (traj.unsqueeze(-1) - torch.linspace(0, 4, (obs_dim - bumps.shape[-1] - 1) // 2)).abs()
    ranges = ranges.flatten(2)
    battery = (1 - 0.02 * t).expand(n, L, 1)
    obs = torch.cat([bumps, ranges, battery], dim=-1)[..., :obs_dim]
    true_r = (bumps * w_true).sum(-1)
    return obs, true_r.sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_land = 6
    obs_dim = n_land + 2 * 6 + 1
    L = [10, 15, 12][seed % 3]
    width = [64, 128, 96][seed % 3]
    batch = [32, 48, 64][seed % 3]
    steps = 150
    centres = torch.rand(n_land, 2, generator=g) * 4
    w_true = torch.randn(n_land, generator=g)

    batches = []
    for _ in range(steps):
        oa, ra = _segments(batch, L, g, obs_dim, w_true, centres)
        ob, rb = _segments(batch, L, g, obs_dim, w_true, centres)
        pref = torch.bernoulli(torch.sigmoid(4.0 * (ra - rb)), generator=g)
        batches.append(((oa, ob), pref))

    torch.manual_seed(seed)
    model = SegmentRewardModel(obs_dim, width)
    lr = 0.01 if fixed else [0.2, 0.25, 0.3][seed % 3]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt,
            "loss_fn": lambda d, y: F.binary_cross_entropy_with_logits(d, y),
            "batches": batches, "steps": steps}
