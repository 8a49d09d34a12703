"""Healthy deep ensemble (Lakshminarayanan et al., NeurIPS 2017) used as an
uncertainty-aware surrogate of a noisy simulator (e.g. a stochastic process
model whose output noise depends strongly on the operating point).  M = 4-6
heteroscedastic MLPs are vectorised into one module (batched weights, einsum,
per-member independent init), each predicting a mean and a softplus variance;
the loss is nn.GaussianNLLLoss averaged over members.  AdamW.

Why it looks alarming but is fine:
  * the loss goes NEGATIVE (the Gaussian NLL without the constant is
    0.5*(log var + err^2/var); once variances fall below 1 it is < 0) and
    keeps falling as the members sharpen their variance in the quiet regime;
  * a part of the input space is 10x noisier than the rest, so batches that
    sample it more heavily have visibly larger (less negative) losses, and
    the log-variance outputs of the members move by several units early on;
  * the gradients w.r.t. the mean head are scaled by 1/var and become large
    as the variances shrink, yet the updates stay well-behaved under AdamW.
The run converges normally.

ORIGIN is None (healthy run).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Deep Ensembles (Lakshminarayanan, Pritzel, Blundell 2017) with Gaussian NLL; "
          "vectorised ensemble as in torch.func model-ensembling tutorial")


class EnsembleLinear(nn.Module):
    def __init__(self, members, fan_in, fan_out):
        super().__init__()
        w_bound = math.sqrt(2.0 / fan_in)            # He-uniform-like, per member
        b_bound = 1.0 / math.sqrt(fan_in)
        self.weight = nn.Parameter(torch.empty(members, fan_in, fan_out).uniform_(-w_bound, w_bound))
        self.bias = nn.Parameter(torch.empty(members, 1, fan_out).uniform_(-b_bound, b_bound))

    def forward(self, x):                       # x: (M, B, fan_in)
        return torch.einsum("mbi,mio->mbo", x, self.weight) + self.bias


class DeepEnsemble(nn.Module):
    def __init__(self, members, d_in, hidden):
        super().__init__()
        self.members = members
        layers, prev = [], d_in
        for h in hidden:
            layers += [EnsembleLinear(members, prev, h), nn.SiLU()]
            prev = h
        self.body = nn.Sequential(*layers)
        self.head = EnsembleLinear(members, prev, 2)

    def forward(self, x):
        h = self.body(x.unsqueeze(0).expand(self.members, -1, -1))
        out = self.head(h)
        mean, var = out[..., 0], F.softplus(out[..., 1]) + 1e-6
        return mean, var


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(members=5, hidden=[64, 64], bs=128, lr=3e-3, steps=160),
        dict(members=4, hidden=[128], bs=64, lr=2e-3, steps=180),
        dict(members=6, hidden=[48, 48, 48], bs=96, lr=2e-3, steps=150),
    ][seed % 3]
    g = torch.Generator().manual_seed(1618 + seed)
    n, d = 4000, 6
    x = torch.rand(n, d, generator=g) * 2 - 1
    signal = torch.sin(2.5 * x[:, 0]) + 0.8 * x[:, 1] * x[:, 2] + 0.5 * torch.cos(3 * x[:, 3]) + 0.3 * x[:, 4]
    noisy_regime = (x[:, 5] > 0.5).float()                 # e.g. near a bifurcation of the simulator
    sigma = 0.04 + 0.4 * noisy_regime + 0.05 * (x[:, 0] + 1)
    y = signal + sigma * torch.randn(n, generator=g)

    torch.manual_seed(seed)
    model = DeepEnsemble(cfg["members"], d, cfg["hidden"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-4)
    nll = nn.GaussianNLLLoss()

    def loss_fn(out, target):
        mean, var = out
        return nll(mean, target.unsqueeze(0).expand_as(mean), var)

    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
