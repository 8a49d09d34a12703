"""PPO (Schulman et al. 2017) update epochs on a fixed rollout buffer: shared tanh MLP trunk
(the Stable-Baselines default activation), categorical policy head and value head, loss =
-clipped surrogate + 0.5 * value MSE - 0.01 * entropy, Adam.

Mechanism: the outdoor navigation environment reports the robot position as GPS/UTM
coordinates in metres (easting ~4e5-7e5, northing ~4e6-6e6; the robot moves within +-100 m)
next to small, well-scaled features (velocity, heading, lidar ranges in [0, 1]).  The user did
not wrap the env in an observation normaliser (VecNormalize).  The first Linear's
pre-activations are dominated by w_e * easting + w_n * northing ~ +-1e5..1e6 for every sample,
so every unit of the first tanh sits at +1 or -1 with the same sign for all states (the
+-100 m of actual motion cannot flip it): its output is a constant vector, tanh'(.) = 0, and
neither the value head nor the policy head receives any state information or any gradient
through the trunk.  The value loss stays at the return variance and the surrogate does not
improve.

ORIGIN: ``trunk.1`` -- the first tanh of the shared trunk, which saturates.

Fix: normalise observations (per-feature mean/std of the buffer, as VecNormalize does),
which brings the pre-activations to O(1); model, optimiser, buffer and loss unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "trunk.1"
SOURCE = ("PPO / Stable-Baselines MlpPolicy (tanh) without VecNormalize on an env that exposes "
          "absolute UTM (GPS) coordinates; SB3 docs/issues recommending observation "
          "normalisation when the agent 'does not learn at all'")


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, width, obs_mean, obs_std):
        super().__init__()
        self.register_buffer("obs_mean", obs_mean)
        self.register_buffer("obs_std", obs_std)
        self.trunk = nn.Sequential(nn.Linear(obs_dim, width), nn.Tanh(),
                                   nn.Linear(width, width), nn.Tanh())
        self.pi = nn.Linear(width, n_actions)
        self.v = nn.Linear(width, 1)
        # "PPO implementation details" init: orthogonal, sqrt(2) gain in the trunk, small heads
        for m in self.trunk:
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, math.sqrt(2))
                nn.init.zeros_(m.bias)
        for m in (self.pi, self.v):
            nn.init.orthogonal_(m.weight, 0.01)
            nn.init.zeros_(m.bias)

    def forward(self, obs, act):
        h = self.trunk((obs - self.obs_mean) / self.obs_std)
        logp_all = torch.log_softmax(self.pi(h), -1)
        logp = logp_all.gather(1, act[:, None]).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy, self.v(h).squeeze(1)


def make_ppo_loss(clip=0.2, vf_coef=0.5, ent_coef=0.01):
    def loss_fn(out, target):
        logp, entropy, value = out
        old_logp, adv, ret = target
        ratio = torch.exp(logp - old_logp)
        surr = torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
        v_loss = ((value - ret) ** 2).mean()
        return -surr + vf_coef * v_loss - ent_coef * entropy.mean()
    return loss_fn


def _buffer(g, n, n_lidar, n_actions, goal, origin):
    xy = origin + (torch.rand(n, 2, generator=g) - 0.5) * 200.0
    vel = torch.randn(n, 2, generator=g) * 0.5
    head = torch.rand(n, generator=g) * 2 * math.pi
    lidar = torch.rand(n, n_lidar, generator=g)
    obs = torch.cat([xy, vel, torch.cos(head)[:, None], torch.sin(head)[:, None], lidar], 1)
    act = torch.randint(0, n_actions, (n,), generator=g)
    old_logp = torch.full((n,), -math.log(n_actions))
    d = (xy - goal).norm(dim=1) / 100.0
    # returns: closer to the goal and moving towards it is better; obstacle proximity penalised
    toward = -((xy - goal) / (xy - goal).norm(dim=1, keepdim=True) * vel).sum(1)
    ret = -d + 0.5 * toward - 0.5 * (lidar.min(1).values < 0.1).float()
    ret = ret + 0.1 * torch.randn(n, generator=g)
    dirs = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])[:n_actions]
    adv = -((xy - goal) / (xy - goal).norm(dim=1, keepdim=True) * dirs[act]).sum(1)
    adv = adv + 0.2 * torch.randn(n, generator=g)
    adv = (adv - adv.mean()) / adv.std()
    ret = (ret - ret.mean()) / ret.std()
    return obs, act, old_logp, adv, ret


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=64, lidar=8, nA=4, bs=256, lr=1e-3, steps=120, origin=(462000.0, 5213000.0)),
           dict(width=128, lidar=12, nA=4, bs=512, lr=1e-3, steps=100, origin=(389000.0, 5820000.0)),
           dict(width=64, lidar=6, nA=4, bs=256, lr=5e-4, steps=150, origin=(701000.0, 4470000.0))][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(90 + seed)
    origin = torch.tensor(cfg["origin"])
    goal = origin.clone()          # goal at the centre of the operating area
    n = cfg["bs"] * cfg["steps"]
    obs, act, old_logp, adv, ret = _buffer(g, n, cfg["lidar"], cfg["nA"], goal, origin)
    d = obs.shape[1]
    if fixed:
        mean, std = obs.mean(0), obs.std(0) + 1e-8
    else:
        mean, std = torch.zeros(d), torch.ones(d)
    model = ActorCritic(d, cfg["nA"], cfg["width"], mean, std)
    batches = []
    for i in range(cfg["steps"]):
        s = slice(i * cfg["bs"], (i + 1) * cfg["bs"])
        batches.append(((obs[s], act[s]), (old_logp[s], adv[s], ret[s])))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], eps=1e-5)
    return dict(model=model, optimizer=opt, loss_fn=make_ppo_loss(), batches=batches,
                steps=cfg["steps"])
