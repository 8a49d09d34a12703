"""SAC update (twin Q critics + tanh-squashed Gaussian actor) on a one-step control task whose
best actions sit on the action bounds. The actor's log-probability uses the change-of-variables
correction written as torch.log(1 - tanh(u)**2). With a small entropy weight the pre-tanh mean
is pushed outwards; once a sample has |u| > ~9, tanh(u) rounds to exactly 1.0 in float32 and
log(0) = -inf (NaN gradients) mid-run. fixed=True adds the usual epsilon: log(1 - a^2 + 1e-6).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "unsafe_op"
ORIGIN = "actor"
SOURCE = ("pranz24/pytorch-soft-actor-critic and SpinningUp SAC: log_prob -= log(1 - tanh(u)^2 + eps); "
          "issues reporting NaN log_prob / NaN actor loss when the epsilon is dropped and actions saturate")

OBS, ACT, HID, BATCH, STEPS = 10, 4, 128, 128, 250
LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0


class TanhGaussianActor(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.net = nn.Sequential(nn.Linear(OBS, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU())
        self.mu = nn.Linear(HID, ACT)
        self.log_std = nn.Linear(HID, ACT)

    def forward(self, obs):
        h = self.net(obs)
        mu = self.mu(h)
        log_std = self.log_std(h).clamp(LOG_STD_MIN, LOG_STD_MAX)
        std = log_std.exp()
        u = mu + std * torch.randn_like(mu)  # reparameterised sample
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        if self.fixed:
            logp = logp - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        else:
            logp = logp - torch.log(1 - a.pow(2)).sum(-1)
        return a, logp


def _q_net():
    return nn.Sequential(nn.Linear(OBS + ACT, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU(), nn.Linear(HID, 1))


class SAC(nn.Module):
    def __init__(self, fixed, alpha):
        super().__init__()
        self.actor = TanhGaussianActor(fixed)
        self.q1, self.q2 = _q_net(), _q_net()
        self.alpha = alpha

    def _q_frozen(self, q, obs, act):  # actor gradient flows through the critic, not into it
        params = {k: v.detach() for k, v in q.named_parameters()}
        return functional_call(q, params, (torch.cat([obs, act], -1),)).squeeze(-1)

    def forward(self, obs, act_buf):
        sa = torch.cat([obs, act_buf], -1)
        q1, q2 = self.q1(sa).squeeze(-1), self.q2(sa).squeeze(-1)
        a_pi, logp_pi = self.actor(obs)
        q_pi = torch.min(self._q_frozen(self.q1, obs, a_pi), self._q_frozen(self.q2, obs, a_pi))
        return dict(q1=q1, q2=q2, q_pi=q_pi, logp_pi=logp_pi, alpha=self.alpha)


def sac_loss(out, r):
    critic = F.mse_loss(out["q1"], r) + F.mse_loss(out["q2"], r)  # one-step task: Q target = reward
    actor = (out["alpha"] * out["logp_pi"] - out["q_pi"]).mean()
    return critic + actor


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(OBS, ACT, generator=g)
    batches = []
    for _ in range(STEPS):  # replay batches of uniform exploration actions, reward scale 10
        obs = torch.randn(BATCH, OBS, generator=g)
        act = 2 * torch.rand(BATCH, ACT, generator=g) - 1
        r = 10.0 * ((obs @ W / math.sqrt(OBS)) * act).sum(-1) + 0.1 * torch.randn(BATCH, generator=g)
        batches.append(((obs, act), r))
    model = SAC(fixed, alpha=0.01)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=sac_loss, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
