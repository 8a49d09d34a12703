"""Fish biomass-density regression from echosounder depth profiles; one survey leg's targets were
exported in grams instead of tonnes, and RMSprop's running square average freezes the model.

Mechanism: an acoustic-trawl survey model predicts (standardised) biomass density per
elementary sampling distance cell from the two-frequency (38/120 kHz) volume-backscatter
profile over depth with a small 1-D CNN, trained with RMSprop (lr 1e-3, alpha 0.99).  One
early batch comes from a leg whose catch-derived biomass was written in grams per nmi^2, not
tonnes: after standardising with the clean constants, its targets are ~1e6 sigma.  No value
is non-finite, but the MSE gradient of that batch is ~1e6 times the usual one.  RMSprop adds
(1-alpha)*g^2 to its square average, so sqrt(v) is inflated ~1e5-fold; it decays by 0.99 per
step and needs thousands of steps to recover.  Until then every normal update is ~1e-5 of its
usual size: the model freezes where the corrupt step left it -- after one large kick (10x lr
per weight) that usually leaves it worse than at the start -- and the loss stops improving for
the rest of the run.

ORIGIN: None -- the corruption is in the targets of one batch; it enters through the loss and
the optimiser state of all parameters at once, not through one module's forward pass.

Fix: the loader validates units and drops the implausible rows of that leg (targets beyond
50 sigma of the clean distribution); the batch is a few rows smaller, everything else is equal.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Acoustic-trawl survey echo-integration (NASC/Sv) to biomass workflows (e.g. ICES WGFAST, "
          "Echoview exports) where one leg's catch data are in the wrong mass unit; RMSprop/Adam "
          "second-moment inflation after a single giant-gradient batch (PyTorch forum reports of "
          "'loss stops decreasing after one bad batch').")


class EchoProfileCNN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, c = [], 2
        for i in range(depth):
            layers += [nn.Conv1d(c, width, 5, padding=2), nn.ELU(), nn.MaxPool1d(2)]
            c = width
        self.conv = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(width, 32), nn.ELU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.head(self.conv(x).mean(-1)).squeeze(-1)


def _profiles(n, nz, g):
    depth = torch.linspace(0, 1, nz)
    layer_z = 0.2 + 0.6 * torch.rand(n, 1, generator=g)
    thick = 0.03 + 0.08 * torch.rand(n, 1, generator=g)
    dens = torch.rand(n, 1, generator=g) ** 2  # school density
    fish = dens * torch.exp(-((depth[None] - layer_z) / thick) ** 2)
    plankton = 0.3 * torch.rand(n, 1, generator=g) * torch.exp(-depth[None] / 0.15)
    # fish (swimbladder) stronger at 38 kHz, plankton stronger at 120 kHz
    sv38 = 10 * torch.log10(1e-4 + fish + 0.2 * plankton)
    sv120 = 10 * torch.log10(1e-4 + 0.5 * fish + plankton)
    x = torch.stack([sv38, sv120], 1) + 0.5 * torch.randn(n, 2, nz, generator=g)
    x = (x + 20) / 10
    biomass_t = 40 * (fish.sum(1) * thick.squeeze(1) * 10) * (1 + 0.05 * torch.randn(n, generator=g))
    return x, biomass_t


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(40 + seed)
    torch.manual_seed(seed)
    width = [32, 24, 48][seed % 3]
    depth = [3, 2, 3][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    bad_step = [9, 14, 20][seed % 3]
    steps, nz = 160, 64

    x, biomass_t = _profiles(steps * batch, nz, g)
    mu, sd = biomass_t.mean(), biomass_t.std()
    batches = []
    for i in range(steps):
        xb = x[i * batch:(i + 1) * batch]
        tb = biomass_t[i * batch:(i + 1) * batch].clone()
        if i == bad_step:
            leg = torch.randperm(batch, generator=g)[: batch // 4]
            tb[leg] = tb[leg] * 1e6        # grams per nmi^2 written where tonnes expected
        yb = (tb - mu) / sd
        if fixed and i == bad_step:
            keep = yb.abs() < 50
            xb, yb = xb[keep], yb[keep]
        batches.append((xb, yb))

    model = EchoProfileCNN(width, depth)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.99)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
