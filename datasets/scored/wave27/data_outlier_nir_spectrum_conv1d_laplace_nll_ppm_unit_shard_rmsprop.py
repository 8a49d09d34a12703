"""Near-infrared spectroscopy calibration: a 1-D CNN maps an absorbance spectrum to the
moisture content of a grain sample, with a heteroscedastic Laplace head (mean and log-scale)
trained with the Laplace negative log-likelihood ``log(2b) + |y - mu| / b`` and RMSprop.
Targets are in percent (~8-20 %).

Mechanism: one lab's shard (three consecutive batches, their step varies with the seed) reports moisture
in ppm instead of percent (x 1e4), so those targets are ~1e5. On those batches the residuals
are ~1e5 / b, the gradient w.r.t. the mean and log-scale heads is ~1e4-1e5 times the usual
one, and RMSprop's squared-gradient average (alpha 0.99) jumps by ~1e8-1e10. A few large steps
push the log-scale up and the mean away; afterwards the effective learning rate
lr / sqrt(v) is ~1e4-1e5 times smaller for hundreds of steps, so the model cannot undo the
damage: the loss jumps and then stays at or above its early value for the rest of the run.
No value becomes non-finite.

ORIGIN: None: the corruption is in the data (target units), and the damage is shared by the
heads and the trunk through the optimiser state; no single module starts it.

Fix: convert the shard's targets back to percent (unit check in the loader); model, loss,
optimiser and steps unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Chemometrics / NIR deep-learning calibration papers with heteroscedastic heads; mixed-unit "
          "lab shards (ppm vs %) in pooled datasets; Adam/RMSprop second-moment inflation after one "
          "outlier batch freezing training (PyTorch forum 'loss stuck after one bad batch')")


class NIRNet(nn.Module):
    def __init__(self, ch, depth):
        super().__init__()
        layers, c = [], 1
        for _ in range(depth):
            layers += [nn.Conv1d(c, ch, 7, padding=3), nn.ReLU(), nn.MaxPool1d(2)]
            c = ch
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Linear(ch, 2)

    def forward(self, x):
        h = self.trunk(x).mean(-1)
        out = self.head(h)
        return out[:, 0], out[:, 1]


def laplace_nll(out, y):
    mu, log_b = out
    return (math.log(2.0) + log_b + (y - mu).abs() * torch.exp(-log_b)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [32, 24, 40][seed % 3]
    depth = 2 + seed % 2
    batch = [32, 48, 24][seed % 3]
    lr = [1e-3, 7e-4, 1.5e-3][seed % 3]
    bad_step = [30, 12, 20][seed % 3]
    L, steps = 128, 200

    torch.manual_seed(seed)
    model = NIRNet(ch, depth)
    nn.init.zeros_(model.head.bias)

    wl = torch.linspace(0, 1, L)
    water_band = torch.exp(-((wl - 0.62) / 0.05) ** 2)
    starch_band = torch.exp(-((wl - 0.35) / 0.08) ** 2)
    batches = []
    for step in range(steps):
        moist = 8 + 12 * torch.rand(batch, generator=g)                 # percent
        starch = torch.rand(batch, generator=g)
        base = 0.3 * torch.rand(batch, 1, generator=g) + 0.2 * wl[None] * torch.rand(batch, 1, generator=g)
        spec = base + 0.04 * moist[:, None] * water_band + 0.5 * starch[:, None] * starch_band
        spec = spec + 0.02 * torch.randn(batch, L, generator=g)
        y = (moist - 14.0) / 3.5                                         # standardised percent
        if bad_step <= step < bad_step + 3 and not fixed:
            y = (moist * 1e4 - 14.0) / 3.5                               # shard reported in ppm
        batches.append(((spec - 0.5).unsqueeze(1), y))

    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.99)
    return {"model": model, "optimizer": opt, "loss_fn": laplace_nll, "batches": batches, "steps": steps}
