"""Battery state-of-health (SOH) estimation from incremental-capacity (dQ/dV) curves with a
small 1D CNN (IC-curve peaks shrink and shift as the cell ages; cf. Li et al. 2019 / Severson
et al. 2019 feature views), trained as a regression with MSE and SGD (Nesterov momentum).

Mechanism: the user reused lr = 0.3-0.5 from an image-classification recipe (BN network,
cross-entropy).  For this BN-free regression net the update/weight ratios on the first
steps are ~1e-1..1, the prediction overshoots the SOH target by growing amounts each step and
the MSE either diverges to inf/NaN or is left oscillating above its starting level (the
ReLU features are wrecked by the first overshooting steps) -- it never converges.

ORIGIN: None -- the global step size is wrong.

Fix: lr = 0.01 (same optimizer, momentum, data and model).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "IC-curve (dQ/dV) CNN SOH regressors (e.g. Li et al. 2019, Severson et al. 2019 data); classifier-recipe SGD lr reused on an MSE regression diverging to NaN"

_CFG = {0: dict(ch=8, lr=0.3, bs=32, steps=80),
        1: dict(ch=12, lr=0.5, bs=16, steps=80),
        2: dict(ch=6, lr=0.4, bs=48, steps=70)}


def _batch(g, n, L=64):
    soh = 0.7 + 0.3 * torch.rand(n, 1, generator=g)
    v = torch.linspace(0, 1, L).view(1, L)
    peak1 = soh * 3.0 * torch.exp(-((v - 0.35 - 0.1 * (1 - soh)) ** 2) / 0.004)
    peak2 = soh ** 2 * 1.5 * torch.exp(-((v - 0.7 + 0.05 * (1 - soh)) ** 2) / 0.006)
    ic = peak1 + peak2 + 0.05 * torch.randn(n, L, generator=g)
    return ic.unsqueeze(1), (soh - 0.85) / 0.087


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(555 + seed)
    ch = c["ch"]
    model = nn.Sequential(
        nn.Conv1d(1, ch, 7, padding=3), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(ch, 2 * ch, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
        nn.Flatten(), nn.Linear(2 * ch * 16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else c["lr"], momentum=0.9, nesterov=True)
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"])
