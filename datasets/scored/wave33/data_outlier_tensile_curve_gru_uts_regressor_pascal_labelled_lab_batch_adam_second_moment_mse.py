"""Ultimate-tensile-strength prediction from the early (elastic + onset of plastic) part of a
tensile test: a GRU reads the digitised engineering stress-strain curve (strain, stress in GPa,
d(stress)/d(strain)) point by point and a linear head regresses the UTS, z-scored with the
mean / std of the reference (previous release) table. MSE loss, Adam.

Mechanism: the curves were merged from several test labs. One lab's LIMS export reports UTS
in SI base units (Pa) instead of GPa, and early in training (step depends on the shuffle / seed) a mini-batch
of that lab's specimens arrives with z-scored targets ~1e9x too large. Its MSE gradient is ~1e9 times
the normal gradient, so Adam's second-moment estimate v jumps by ~(1e9)^2 * (1 - beta2) and,
with beta2 = 0.999, stays inflated for thousands of steps; at the same time the first moment
kicks all weights toward "predict ~1e9" for the next few dozen steps. Afterwards every normal
gradient is divided by a sqrt(v) ~ 1e7x its usual size: the model is effectively frozen near (or worse than) where it
started, and the loss never goes below its first-steps value. No value is ever non-finite.

ORIGIN: None. The corruption is in the targets of one batch; the first layer it reaches is the
loss, and the damage is spread over every parameter's optimizer state, not one module.

Fix: convert / filter the mislabelled batch (targets divided by 1e9 to GPa, as a unit check in
the loader would do); everything else is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Known pattern: unit mix-ups (Pa vs MPa vs GPa) when merging mechanical-test data from "
          "several sources (NIMS MatNavi / Citrine-style aggregated datasets); Adam second-moment "
          "inflation after a single gradient spike (Kingma & Ba 2015 bias/v dynamics; "
          "'loss stuck after one bad batch with Adam' forum reports).")


class TensileGRU(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(3, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(-1)


def _curves(g, n, T):
    E = 150 + 80 * torch.rand(n, 1, generator=g)            # Young's modulus, GPa
    sy = 0.25 + 0.9 * torch.rand(n, 1, generator=g)         # yield strength, GPa
    nh = 0.05 + 0.3 * torch.rand(n, 1, generator=g)         # hardening exponent
    eps = torch.linspace(0, 0.03, T).unsqueeze(0).expand(n, T)
    ey = sy / E
    plastic = sy * (1 + (eps - ey).clamp_min(0) / ey) ** nh
    sig = torch.where(eps < ey, E * eps, plastic)
    sig = sig + 0.01 * torch.randn(n, T, generator=g)
    dsig = torch.diff(sig, dim=1, prepend=sig[:, :1]) / (eps[0, 1] - eps[0, 0]) / 100.0
    x = torch.stack([eps * 30, sig, dsig], -1)
    uts = sy.squeeze(1) * (1 + 2.5 * nh.squeeze(1)) + 0.02 * torch.randn(n, generator=g)
    return x, uts


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [16, 24, 32][seed % 3]
    T = 24
    steps = 150
    torch.manual_seed(seed)
    model = TensileGRU(hidden, layers)
    x, y = _curves(g, 1500, T)
    mu, sd = float(y.mean()), float(y.std())   # scaler from the reference table (GPa)
    bad_step = [1, 2, 3][seed % 3] + int(torch.randint(0, 2, (1,), generator=g))
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        xb, yb = x[idx].clone(), y[idx].clone()
        if s == bad_step and not fixed:
            yb = yb * 1e9   # LIMS export in Pa
        yb = (yb - mu) / sd
        batches.append((xb, yb))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
