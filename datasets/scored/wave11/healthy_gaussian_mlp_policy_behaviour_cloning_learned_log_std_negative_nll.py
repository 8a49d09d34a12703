"""Healthy: goal-conditioned behaviour cloning of a 2-D reaching controller with a small Gaussian MLP
policy (inputs: (observation, goal) tuple -> tanh MLP -> action mean; a learned state-independent
log-std as in the usual continuous-control policies), trained with Adam on the Gaussian negative
log-likelihood of the expert actions. The expert is nearly deterministic (action noise std 0.05), so
once the mean fits, the policy shrinks its log-std towards log(0.05) and the per-dimension NLL goes
from ~+1 to about -1.3: the training loss crosses zero and keeps going negative, and the log-std
parameter gets the largest gradients of the model for the first ~100 steps. A negative and still
decreasing "loss" and a steadily falling std look alarming but are exactly what a well-fitting
density model does. fixed=True returns the same run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Gaussian MLP policies with state-independent log_std (rllab/Spinning Up 'MLPGaussianActor'); "
          "behaviour cloning by maximum likelihood, whose NLL is negative for low-noise experts")

OBS, ACT = 6, 2


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS + 2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.mu = nn.Linear(64, ACT)
        self.log_std = nn.Parameter(torch.full((ACT,), -0.5))   # Spinning Up default

    def forward(self, obs, goal):
        h = self.body(torch.cat([obs, goal], -1))
        return self.mu(h), self.log_std.expand(obs.shape[0], ACT)


def loss_fn(out, act):
    mu, log_std = out
    nll = 0.5 * ((act - mu) / log_std.exp()) ** 2 + log_std + 0.5 * math.log(2 * math.pi)
    return nll.mean()


def _expert(obs, goal):
    pos, vel = obs[:, :2], obs[:, 2:4]
    return torch.tanh(1.5 * (goal - pos) - 0.6 * vel + 0.2 * obs[:, 4:6])


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GaussianPolicy()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    steps, B = 250, 128
    batches = []
    for _ in range(steps):
        obs = torch.randn(B, OBS, generator=g)
        goal = torch.rand(B, 2, generator=g) * 2 - 1
        act = _expert(obs, goal) + 0.05 * torch.randn(B, ACT, generator=g)
        batches.append(((obs, goal), act))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
