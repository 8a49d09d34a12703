"""RealNVP density model (stack of affine coupling layers with alternating masks, standard
normal base) fitted by maximum likelihood on a scaled 2-D two-moons point cloud. Each coupling
predicts a log-scale s(x_a) and shift t(x_a) with a small ReLU MLP and applies
x_b * exp(s) + t, adding sum(s) to the log-determinant. The run uses Adam at lr 0.1-0.3
(copied from a tiny-classifier notebook); the first few full-size Adam
steps on the scale nets make exp(s) explode through the stacked couplings, the log-det and the
base-density term go to +-inf and the NLL becomes non-finite within a few dozen steps. The fixed
run only lowers the learning rate."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("RealNVP (Dinh et al. 2017) training instabilities: 'NaN loss in normalizing flow "
          "after a few iterations' reports in nflows / FrEIA / pytorch-flows issue trackers, "
          "fixed by lowering the Adam lr")


class Coupling(nn.Module):
    def __init__(self, mask, width):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, width), nn.ReLU(), nn.Linear(width, width),
                                 nn.ReLU(), nn.Linear(width, 4))

    def forward(self, x):
        xa = x * self.mask
        s, t = self.net(xa).chunk(2, dim=1)
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        y = xa + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(1)


class RealNVP(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0])
                 for i in range(n_layers)]
        self.couplings = nn.ModuleList([Coupling(m, width) for m in masks])

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for c in self.couplings:
            x, ld = c(x)
            logdet = logdet + ld
        return x, logdet


def nll(out, y):
    z, logdet = out
    log_pz = -0.5 * (z ** 2).sum(1) - math.log(2 * math.pi)
    return -(log_pz + logdet).mean()


def moons(n, g):
    m = n // 2
    th1 = torch.rand(m, generator=g) * math.pi
    th2 = torch.rand(n - m, generator=g) * math.pi
    a = torch.stack([torch.cos(th1), torch.sin(th1)], 1)
    b = torch.stack([1 - torch.cos(th2), 0.5 - torch.sin(th2)], 1)
    x = torch.cat([a, b], 0) + 0.08 * torch.randn(n, 2, generator=g)
    return (x - torch.tensor([0.5, 0.25])) * 2.5


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    n_layers = [4, 6, 8][seed % 3]
    width = [32, 48, 32][seed % 3]
    batch = [128, 256, 192][seed % 3]
    steps = [150, 120, 140][seed % 3]
    lr = 1e-3 if fixed else [0.3, 0.12, 0.1][seed % 3]
    batches = [(moons(batch, g), torch.zeros(batch)) for _ in range(steps)]
    model = RealNVP(n_layers, width)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
