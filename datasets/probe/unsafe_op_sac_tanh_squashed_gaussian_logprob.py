"""Soft Actor-Critic actor update with a tanh-squashed Gaussian policy whose log-prob
change-of-variables term is computed as log(1 - tanh(u)^2) with NO epsilon.

Mechanism. The SAC policy samples u = mu(s) + std(s) * eps and acts with a = tanh(u); the
log-density needs the Jacobian correction  log pi(a|s) = log N(u; mu, std) - sum log(1 - a^2).
The actor is trained against a (frozen snapshot of the) critic whose Q grows with the action
along a state-dependent direction (a "bang-bang" task whose best actions sit on the action
bounds), with reward scale k. The actor loss  alpha * log pi - Q  therefore pushes the mean
pre-activation mu outward; the entropy bonus keeps std around 1-2. For the first stretch of
training |u| stays well below ~9 and everything is calm. Once mu has drifted to 4-6, the Gaussian
tail occasionally produces a sample with |u| >~ 9.2, where float32 tanh(u) rounds to exactly 1.0,
1 - a^2 == 0 and log(0) = -inf: the sampled log-prob becomes +inf and the actor loss inf/NaN at
that step. The failure is born inside the `squash` module (the tanh + log-Jacobian), the first
module whose output is non-finite; the trunk, mu and log_std heads are all finite.

ORIGIN = "squash": the module that evaluates log(1 - tanh(u)^2); its inputs are finite and its
output is the first non-finite value in the forward pass.

Fix (only the root cause): the standard epsilon, log(1 - a^2 + 1e-6), as in common SAC
implementations (the numerically stable alternative is 2*(log 2 - u - softplus(-2u))).

Seed changes: state/action dims, width, batch size, reward scale k, entropy coefficient alpha,
learning rate, so the step at which the first saturated sample appears moves around.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "squash"
SOURCE = ("SAC tanh-squashed Gaussian log-prob without epsilon: pranz24/pytorch-soft-actor-critic uses "
          "log(1 - tanh(u)^2 + 1e-6); many 'SAC actor loss becomes NaN/inf' reports trace back to "
          "dropping that epsilon (tanh(u) == 1.0 in float32 for |u| > ~9).")

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class TanhSquash(nn.Module):
    """a = tanh(u); returns (a, sum log|da/du|)."""

    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, u):
        a = torch.tanh(u)
        log_det = torch.log(1.0 - a.pow(2) + self.eps).sum(-1)
        return a, log_det


class SACActor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden, eps):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
        )
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)
        self.squash = TanhSquash(eps)

    def forward(self, obs, noise):
        h = self.trunk(obs)
        mu = self.mu(h)
        log_std = self.log_std(h).clamp(LOG_STD_MIN, LOG_STD_MAX)
        std = log_std.exp()
        u = mu + std * noise  # reparameterised sample
        log_n = (-0.5 * noise.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        a, log_det = self.squash(u)
        return a, log_n - log_det


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    obs_dim = [6, 8, 10, 12][seed % 4]
    act_dim = [2, 3, 4][seed % 3]
    hidden = [64, 96, 128][(seed // 2) % 3]
    batch = [128, 192, 256][seed % 3]
    k = [40.0, 60.0, 80.0][(seed + 1) % 3]   # reward scale of the critic snapshot
    alpha = [0.2, 0.1, 0.15][seed % 3]       # entropy temperature
    lr = [1e-3, 7e-4, 1.2e-3][(seed + 2) % 3]
    steps = 300

    model = SACActor(obs_dim, act_dim, hidden, eps=1e-6 if fixed else 0.0)

    # frozen critic snapshot: Q(s, a) = k * <c(s), a>, with c(s) a fixed nonlinear direction of the state
    Wc = torch.randn(obs_dim, act_dim, generator=g) / math.sqrt(obs_dim)

    def critic_dir(s):
        return torch.tanh(2.0 * s @ Wc)

    batches = []
    for _ in range(steps):
        s = torch.randn(batch, obs_dim, generator=g)
        noise = torch.randn(batch, act_dim, generator=g)
        batches.append(((s, noise), critic_dir(s)))

    def loss_fn(out, c):
        a, logp = out
        q = k * (c * a).sum(-1)
        # offset by the best attainable Q so the actor loss is non-negative-ish and comparable across seeds
        return (alpha * logp - q).mean() + k * c.abs().sum(-1).mean()

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
