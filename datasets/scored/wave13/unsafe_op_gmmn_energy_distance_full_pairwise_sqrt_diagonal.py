"""Generative moment-matching network (Li et al. 2015; Dziugaite et al. 2015) trained with the
energy distance  2 E||x - y|| - E||x - x'|| - E||y - y'||  between generated samples x = G(z)
and real samples y (tabular sensor data), Adam.  The three distance statistics are computed by
an ``EnergyStats`` module at the end of the model.

Mechanism: the pairwise Euclidean distances are written by hand as
``((a[:, None] - a[None]) ** 2).sum(-1).sqrt()`` on the full n x n matrix, and the unbiased
within-sample mean is taken as ``D.sum() / (n * (n - 1))`` -- the diagonal zeros contribute
nothing to the *value*, so the forward pass and the printed loss look perfect.  But the
diagonal entries are sqrt(0): their backward is grad / (2 * sqrt(0)) = inf, times the zero
difference x_i - x_i, i.e. 0 * inf = NaN, and that NaN is summed into the gradient of every
generated sample and from there into every generator weight.  The first loss value is finite;
after the first optimiser step all weights are NaN.

ORIGIN: ``stats`` -- the EnergyStats module holding the unguarded sqrt; the first non-finite
value (the gradient w.r.t. its input) is produced there.

Fix: sqrt(d^2 + 1e-12) (an epsilon inside the square root); everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "stats"
SOURCE = ("GMMN / energy-distance generators with hand-written pairwise distances; the classic "
          "'NaN gradient of sqrt / torch.norm at zero distance on the diagonal of a pairwise "
          "distance matrix' reported in PyTorch forums and issues")


class EnergyStats(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def _dist(self, a, b):
        return (((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) + self.eps).sqrt()

    def forward(self, x, y):
        n, m = x.shape[0], y.shape[0]
        exy = self._dist(x, y).mean()
        exx = self._dist(x, x).sum() / (n * (n - 1))     # diagonal is 0 -> "unbiased" mean
        eyy = self._dist(y, y).sum() / (m * (m - 1))
        return torch.stack([exy, exx, eyy])


class GMMN(nn.Module):
    def __init__(self, z_dim, width, depth, out_dim, eps):
        super().__init__()
        layers, d = [], z_dim
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, out_dim))
        self.generator = nn.Sequential(*layers)
        self.stats = EnergyStats(eps)

    def forward(self, z, y_real):
        return self.stats(self.generator(z), y_real)


def energy_distance(stats, _unused):
    exy, exx, eyy = stats
    return 2 * exy - exx - eyy


def _sensor(g, n, dim, mix):
    k = torch.multinomial(mix, n, replacement=True, generator=g)
    centres = torch.linspace(-2, 2, mix.numel())[:, None] * torch.ones(1, dim)
    centres[:, 1::2] *= -1
    return centres[k] + 0.4 * torch.randn(n, dim, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(dim=4, z=8, width=64, depth=2, bs=128, lr=1e-3, steps=150),
           dict(dim=6, z=10, width=96, depth=3, bs=64, lr=5e-4, steps=120),
           dict(dim=3, z=6, width=48, depth=2, bs=256, lr=2e-3, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(321 + seed)
    model = GMMN(cfg["z"], cfg["width"], cfg["depth"], cfg["dim"], 1e-12 if fixed else 0.0)
    mix = torch.tensor([0.4, 0.35, 0.25])
    batches = []
    for _ in range(cfg["steps"]):
        z = torch.randn(cfg["bs"], cfg["z"], generator=g)
        y = _sensor(g, cfg["bs"], cfg["dim"], mix)
        batches.append(((z, y), torch.zeros(cfg["bs"])))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=energy_distance, batches=batches,
                steps=cfg["steps"])
