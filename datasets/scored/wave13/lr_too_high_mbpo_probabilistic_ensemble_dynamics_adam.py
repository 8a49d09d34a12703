"""MBPO / PETS probabilistic ensemble dynamics model (Chua et al. 2018; Janner et al. 2019):
E bootstrapped Gaussian MLPs with swish activations (batched "EnsembleFC" layers) predicting
the state delta, soft-bounded log-variance (learned max/min logvar), Gaussian NLL +
0.01 * (max_logvar - min_logvar) regulariser, Adam.

Mechanism: the model was first trained with SGD(lr=0.2-0.3) in the user's supervised
dynamics-learning code; when switching to the MBPO recipe they replaced the optimiser by Adam
but kept the lr (MBPO uses 1e-3).  Adam moves every parameter by ~lr per step regardless of
the gradient scale, so the very first updates are as large as the weights themselves
(update/weight ratio ~0.3-1 instead of ~1e-3).  The mean head overshoots by orders of magnitude, the
(mu - y)^2 * exp(-logvar) term amplifies it wherever the variance head was pushed down, and
the ensemble NLL jumps from ~2-7 to 1e4-1e6 and is still tens to thousands of times its
initial value at the end of the run.

ORIGIN: None -- every layer gets overshooting Adam steps; no single module starts it.

Fix: lr=1e-3 (MBPO's model lr for Adam); model, loss, batches unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("MBPO / PETS probabilistic ensemble dynamics model (Janner et al. 2019, Chua et al. "
          "2018) with soft-bounded logvar; reports of the model NLL exploding after switching the "
          "model optimiser from SGD to Adam without changing the lr")


class EnsembleFC(nn.Module):
    def __init__(self, E, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(E, d_in, d_out))
        self.bias = nn.Parameter(torch.zeros(E, 1, d_out))
        nn.init.trunc_normal_(self.weight, std=1 / (2 * math.sqrt(d_in)))

    def forward(self, x):                      # x: E x B x d_in
        return torch.baddbmm(self.bias, x, self.weight)


class EnsembleDynamics(nn.Module):
    def __init__(self, E, obs, act, width, depth):
        super().__init__()
        self.E, self.obs = E, obs
        layers, d = [], obs + act
        for _ in range(depth):
            layers += [EnsembleFC(E, d, width), nn.SiLU()]
            d = width
        self.trunk = nn.Sequential(*layers)
        self.head = EnsembleFC(E, width, 2 * obs)
        self.max_logvar = nn.Parameter(torch.full((1, 1, obs), 0.5))
        self.min_logvar = nn.Parameter(torch.full((1, 1, obs), -10.0))

    def forward(self, sa):                     # sa: E x B x (obs + act), bootstrapped per member
        out = self.head(self.trunk(sa))
        mean, logvar = out[..., :self.obs], out[..., self.obs:]
        logvar = self.max_logvar - F.softplus(self.max_logvar - logvar)
        logvar = self.min_logvar + F.softplus(logvar - self.min_logvar)
        return mean, logvar, self.max_logvar, self.min_logvar


def ensemble_nll(out, target):
    mean, logvar, max_lv, min_lv = out
    inv_var = torch.exp(-logvar)
    nll = (((mean - target) ** 2) * inv_var + logvar).mean(-1).mean(-1).sum()
    return nll + 0.01 * (max_lv.sum() - min_lv.sum())


def _transitions(g, n, obs, act, A, B):
    s = torch.randn(n, obs, generator=g)
    a = torch.rand(n, act, generator=g) * 2 - 1
    # nonlinear, heteroscedastic dynamics (pendulum/cheetah-like)
    delta = 0.1 * torch.tanh(s @ A) + 0.1 * (a @ B) + 0.05 * torch.sin(2 * s)
    noise = (0.01 + 0.05 * torch.sigmoid(s[:, :1] * 2)) * torch.randn(n, obs, generator=g)
    return torch.cat([s, a], 1), (delta + noise) / 0.15        # targets standardised


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(E=5, obs=6, act=2, width=64, depth=3, bs=64, lr=0.3, steps=120),
           dict(E=7, obs=8, act=3, width=96, depth=2, bs=48, lr=0.2, steps=100),
           dict(E=4, obs=4, act=1, width=48, depth=4, bs=128, lr=0.25, steps=150)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    model = EnsembleDynamics(cfg["E"], cfg["obs"], cfg["act"], cfg["width"], cfg["depth"])
    A = torch.randn(cfg["obs"], cfg["obs"], generator=g) / math.sqrt(cfg["obs"])
    Bm = torch.randn(cfg["act"], cfg["obs"], generator=g)
    pool_x, pool_y = _transitions(g, 4000, cfg["obs"], cfg["act"], A, Bm)
    batches = []
    for _ in range(cfg["steps"]):
        # each ensemble member gets its own bootstrap minibatch
        idx = torch.randint(0, pool_x.shape[0], (cfg["E"], cfg["bs"]), generator=g)
        batches.append((pool_x[idx], pool_y[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=ensemble_nll, batches=batches,
                steps=cfg["steps"])
