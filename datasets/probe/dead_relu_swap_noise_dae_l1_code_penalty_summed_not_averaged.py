"""Tabular denoising autoencoder with swap noise (the Porto Seguro / Jahrer
"DAE" recipe) used as a feature extractor for a downstream GBDT: RankGauss
numeric columns, 15% swap noise, a ReLU encoder whose last layer is the code
("bottleneck features"), a linear decoder, MSE reconstruction of the clean
row.  To get sparse features an L1 activity penalty on the code is added to
the loss.  SGD with momentum.

Mechanism: the penalty was meant to be ``lam * code.abs().mean()`` (lam =
1e-2) but was written as ``lam * code.abs().sum()``: summed over the batch
and all code units it is B*H (~6e3-2e4) times stronger.  Every active code
unit receives the same positive gradient lam on every sample, so the first
momentum-SGD step pushes every code unit's bias and weights coherently down
by several pre-activation standard deviations.  After one or two steps the
code ReLU is zero for every row, the penalty is 0, no gradient reaches the
encoder, and the decoder only sees zeros: the reconstruction is the output
bias and the loss is frozen at the per-column variance (~1).

ORIGIN is ``code.1``: the code-layer ReLU is the layer that dies (the lower
encoder layers stay alive but are cut off behind it).

Fix: the L1 activity term averaged (``.mean()``) as intended; nothing else.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
SOURCE = ("Porto Seguro winning solution (M. Jahrer) swap-noise DAE; sparse-code L1 "
          "activity regulariser (Keras ActivityRegularization style) summed instead of averaged")

ORIGIN = "code.1"


class SwapNoiseDAE(nn.Module):
    def __init__(self, d, hidden, code_dim):
        super().__init__()
        layers, prev = [], d
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        self.encoder = nn.Sequential(*layers)
        self.code = nn.Sequential(nn.Linear(prev, code_dim), nn.ReLU())
        self.decoder = nn.Linear(code_dim, d)

    def forward(self, x):
        code = self.code(self.encoder(x))
        return self.decoder(code), code


def rank_gauss(x):
    n = x.shape[0]
    r = x.argsort(0).argsort(0).float()
    u = (r + 0.5) / n
    return torch.special.ndtri(u.clamp(1e-4, 1 - 1e-4))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(d=40, hidden=[256, 256], code=128, bs=128, lr=0.05, steps=100),
        dict(d=30, hidden=[384], code=96, bs=64, lr=0.03, steps=120),
        dict(d=50, hidden=[256, 256, 256], code=64, bs=96, lr=0.05, steps=90),
    ][seed % 3]
    g = torch.Generator().manual_seed(123 + seed)
    n, d = 5000, cfg["d"]
    z = torch.randn(n, 6, generator=g)
    mix = torch.randn(6, d, generator=g)
    raw = torch.exp(z @ mix * 0.5) + 0.3 * torch.randn(n, d, generator=g)   # skewed, correlated columns
    x = rank_gauss(raw)

    torch.manual_seed(seed)
    model = SwapNoiseDAE(d, cfg["hidden"], cfg["code"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    mse = nn.MSELoss()
    lam = 1e-2

    def loss_fn(out, target):
        recon, code = out
        if fixed:
            penalty = lam * code.abs().mean()
        else:
            penalty = lam * code.abs().sum()
        return mse(recon, target) + penalty

    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g)
        clean = x[idx]
        swap = torch.rand(clean.shape, generator=g) < 0.15
        donor = x[torch.randint(0, n, clean.shape, generator=g), torch.arange(d).expand_as(clean)]
        noisy = torch.where(swap, donor, clean)
        batches.append((noisy, clean))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
