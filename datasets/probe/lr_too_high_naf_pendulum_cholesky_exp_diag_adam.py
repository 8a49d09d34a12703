"""NAF critic for Pendulum trained off-line: Q(s,a) = V(s) - 1/2 (a-mu)^T L L^T (a-mu), exp() on
the diagonal of L. Adam runs at lr 0.025-0.035 (a hard-coded tutorial-style "LR = 0.03"): its first
update moves every weight by ~lr (update/weight ratios 0.1-1), the 256-wide ReLU trunk turns that
into a jump of ~30 units in the L head, exp() makes P explode and the TD loss overflows at the
next step. fixed=True uses the NAF paper's lr 1e-3; data, model and target updates are the same.
"""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None  # the step size of the whole model, not one module
SOURCE = ("Gu et al. 2016 'Continuous Deep Q-Learning with Model-based Acceleration' (NAF, "
          "Adam lr 1e-3); keras-rl issue #28 'CDQN nan actions' (NAF agent, loss jumps to 1e7 "
          "then NaN); muupan/dqn-in-the-caffe #6: Q-values diverge unless the learning rate is "
          "chosen carefully")

GAMMA = 0.95
A_MAX = 2.0


def _pendulum_buffer(gen, n):
    """Gym Pendulum-v1 dynamics, uniformly random states and torques."""
    th = torch.rand(n, generator=gen) * 2 * math.pi - math.pi
    thd = torch.rand(n, generator=gen) * 16 - 8
    u = torch.rand(n, 1, generator=gen) * 2 * A_MAX - A_MAX
    rew = -(th ** 2 + 0.1 * thd ** 2 + 0.001 * u[:, 0] ** 2)
    g, mass, length, dt = 10.0, 1.0, 1.0, 0.05
    acc = 3 * g / (2 * length) * torch.sin(th) + 3.0 / (mass * length ** 2) * u[:, 0]
    nthd = (thd + acc * dt).clamp(-8, 8)
    nth = th + nthd * dt
    nth = (nth + math.pi) % (2 * math.pi) - math.pi

    def obs(a, b):
        return torch.stack([a.cos(), a.sin(), b], 1)

    return obs(th, thd), u, rew, obs(nth, nthd)


class NAFHead(nn.Module):
    def __init__(self, obs_dim=3, act_dim=1, hidden=256):
        super().__init__()
        self.act_dim = act_dim
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.v = nn.Linear(hidden, 1)
        self.mu = nn.Linear(hidden, act_dim)
        self.l_entries = nn.Linear(hidden, act_dim * (act_dim + 1) // 2)
        self.register_buffer("tril", torch.tril_indices(act_dim, act_dim))

    def value(self, obs):
        return self.v(self.trunk(obs)).squeeze(1)

    def forward(self, obs, act):
        h = self.trunk(obs)
        v = self.v(h).squeeze(1)
        mu = A_MAX * torch.tanh(self.mu(h))
        n = obs.shape[0]
        L = torch.zeros(n, self.act_dim, self.act_dim)
        L[:, self.tril[0], self.tril[1]] = self.l_entries(h)
        diag = torch.diagonal(L, dim1=1, dim2=2)
        L = L - torch.diag_embed(diag) + torch.diag_embed(diag.exp())
        P = L @ L.transpose(1, 2)
        d = (act - mu).unsqueeze(2)
        adv = -0.5 * (d.transpose(1, 2) @ P @ d).view(n)
        return v + adv


class NAFAgent(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = NAFHead()
        self.q_target = copy.deepcopy(self.q)
        for p in self.q_target.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def soft_update(self, tau=0.01):
        for p, tp in zip(self.q.parameters(), self.q_target.parameters(), strict=True):
            tp.mul_(1 - tau).add_(tau * p)

    def forward(self, obs, act, next_obs):
        q_sa = self.q(obs, act)
        with torch.no_grad():
            v_next = self.q_target.value(next_obs)   # max_a Q(s',a) = V(s') in NAF
        return q_sa, v_next


def td_mse(out, rew):
    q_sa, v_next = out
    return F.mse_loss(q_sa, rew + GAMMA * v_next)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps, batch = 200, 128
    obs, act, rew, nobs = _pendulum_buffer(gen, 20000)
    model = NAFAgent()
    lr = 1e-3 if fixed else (0.025 + 0.005 * (seed % 3))
    optimizer = torch.optim.Adam(model.q.parameters(), lr=lr)
    optimizer.register_step_post_hook(lambda opt, a, k: model.soft_update())
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, obs.shape[0], (batch,), generator=gen)
        batches.append(((obs[idx], act[idx], nobs[idx]), rew[idx]))
    return dict(model=model, optimizer=optimizer, loss_fn=td_mse, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
