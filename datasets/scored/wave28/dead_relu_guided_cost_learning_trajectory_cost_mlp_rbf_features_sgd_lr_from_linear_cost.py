"""Guided cost learning (Finn et al. 2016), the sample-based MaxEnt IRL objective, on a 2-D task.

Data: each batch holds D expert trajectories (goal-directed, detouring round a hazard) and S
trajectories sampled from the current (here: a fixed, exploratory) sampling policy, all of length
T.  States are encoded as radial-basis "place cell" activations over a grid of centres -- every
feature is >= 0.  Model: cost c(s) = one-hidden-layer ReLU MLP with a zero-initialised output layer;
trajectory reward R(tau) = -sum_t c(s_t).  Loss: the MaxEnt IRL negative log-likelihood estimated
with samples,  -mean_demos R + logsumexp_{all trajs} R  (a softmax over trajectories,
so a constant cost shift cancels exactly).

Mechanism: the cost net replaced a linear cost on the same features that was trained with plain SGD
at lr ~1-1.5; the lr was kept.  Inputs are non-negative and every trajectory sums T states, so one
step changes each hidden unit's pre-activation by ~lr * delta * T * ||x||^2 with one sign for all
states.  Within the first steps the updates overshoot and every hidden unit is left with a negative
pre-activation for every state: c(s) is a constant, all trajectories get the same R, the loss sits
exactly at its initial value log N and every gradient is exactly zero.  A
flat loss, never a non-finite one.

ORIGIN: "cost.0", the hidden Linear whose ReLU units all die.

Fix: a learning rate suited to the MLP (plain SGD lr = 0.005); same model, data and schedule.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "cost.0"
SOURCE = ("Dying ReLU with too large a learning rate (CS231n notes; Lu et al. 2019); guided cost "
          "learning / sample-based MaxEnt IRL (Finn, Levine & Abbeel 2016) with an MLP cost "
          "replacing a linear cost")


class TrajectoryCost(nn.Module):
    def __init__(self, in_dim, width):
        super().__init__()
        self.cost = nn.Sequential(nn.Linear(in_dim, width), nn.ReLU(), nn.Linear(width, 1))
        nn.init.zeros_(self.cost[2].weight)
        nn.init.zeros_(self.cost[2].bias)

    def forward(self, trajs):
        return -self.cost(trajs).squeeze(-1).sum(-1)          # R(tau) per trajectory


def _maxent_irl_nll(R, n_demo):
    return -R[:n_demo].mean() + torch.logsumexp(R, 0)


def _trajs(n, T, g, goal, hazard, expert):
    pos = torch.zeros(n, T, 2)
    p = torch.rand(n, 2, generator=g) * 0.3
    for t in range(T):
        if expert:
            to_goal = goal - p
            away = p - hazard
            push = away / (away.norm(dim=-1, keepdim=True) ** 2 + 0.02) * 0.01
            step = 0.08 * to_goal / (to_goal.norm(dim=-1, keepdim=True) + 1e-3) + push
            step = step + 0.01 * torch.randn(n, 2, generator=g)
        else:
            step = 0.05 * torch.randn(n, 2, generator=g) + torch.tensor([0.03, -0.005])
        p = (p + step).clamp(0, 1)
        pos[:, t] = p
    return pos


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    side = [5, 6, 7][seed % 3]
    width = [32, 64, 48][seed % 3]
    n_demo, n_samp = [(8, 24), (12, 36), (6, 30)][seed % 3]
    T = [12, 16, 10][seed % 3]
    steps = 250
    lin = torch.linspace(0, 1, side)
    centres = torch.stack(torch.meshgrid(lin, lin, indexing="ij"), -1).reshape(-1, 2)
    goal = torch.tensor([0.85, 0.85]) - 0.1 * torch.rand(2, generator=g)
    hazard = torch.tensor([0.5, 0.5]) + 0.1 * torch.randn(2, generator=g)

    def feats(pos):
        d = ((pos.unsqueeze(-2) - centres) ** 2).sum(-1)
        return torch.exp(-d / (2 * (1.0 / side) ** 2))

    batches = []
    for _ in range(steps):
        demo = _trajs(n_demo, T, g, goal, hazard, expert=True)
        samp = _trajs(n_samp, T, g, goal, hazard, expert=False)
        batches.append((feats(torch.cat([demo, samp])), n_demo))

    torch.manual_seed(seed)
    model = TrajectoryCost(centres.shape[0], width)
    lr = 0.005 if fixed else [1.0, 1.5, 1.2][seed % 3]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": _maxent_irl_nll, "batches": batches,
            "steps": steps}
