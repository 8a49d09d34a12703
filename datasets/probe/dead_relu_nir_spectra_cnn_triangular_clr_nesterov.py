"""1D CNN regressing a (z-scored) analyte concentration from non-negative NIR absorbance
spectra, trained with Nesterov SGD under a triangular cyclical lr (Smith 2017) computed
inside the optimizer. max_lr was read off an LR range test at the loss minimum instead of
well before it, so as the cycle climbs the updates overshoot; because the spectra are all
non-negative, an overshooting error of one sign moves every first-layer filter along the
same (positive) input direction and drives its pre-activations below zero for every
spectrum. The single ReLU conv layer dies (mid-cycle, often after the loss was already
low) and the loss returns to the variance of the target and stays there.
fixed=True: max_lr 10x lower (the value just before the range-test minimum)."""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.0"
SOURCE = ("Smith 2017 'Cyclical Learning Rates' LR range test misread (max_lr at the loss "
          "minimum); dying-ReLU reports on spectroscopy CNNs (e.g. 'DeepSpectra' style models, "
          "'CNN regression outputs constant value after a few epochs' on Stack Overflow/Cross "
          "Validated): ReLU filters on all-positive spectra killed by a too-high lr peak.")


class TriangularCLRSGD(torch.optim.SGD):
    def __init__(self, params, base_lr, max_lr, half_cycle, **kw):
        super().__init__(params, lr=base_lr, **kw)
        self.base_lr, self.max_lr, self.half, self.t = base_lr, max_lr, half_cycle, 0

    @torch.no_grad()
    def step(self, closure=None):
        cyc = self.t / (2 * self.half)
        x = abs(2 * (cyc - math.floor(cyc)) - 1)          # 1 -> 0 -> 1 over a cycle
        lr = self.base_lr + (self.max_lr - self.base_lr) * (1 - x)
        for g in self.param_groups:
            g["lr"] = lr
        self.t += 1
        return super().step(closure)


class SpectraCNN(nn.Module):
    def __init__(self, n=256):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(1, 32, 9, stride=2, padding=4), nn.ReLU(),
            nn.AvgPool1d(8), nn.Flatten())
        self.head = nn.Linear(32 * (n // 16), 1)

    def forward(self, x):
        return self.head(self.features(x)).squeeze(-1)


def _data(g, steps, bs=32, n=256, k=6):
    grid = torch.linspace(0, 1, n)
    centers = torch.rand(k, generator=g) * 0.8 + 0.1
    widths = torch.rand(k, generator=g) * 0.05 + 0.02
    bands = torch.exp(-((grid[None] - centers[:, None]) ** 2) / (2 * widths[:, None] ** 2))  # k x n
    batches = []
    for _ in range(steps):
        conc = torch.rand(bs, k, generator=g)
        baseline = 0.3 + 0.2 * torch.rand(bs, 1, generator=g) + 0.1 * grid[None] * torch.rand(bs, 1, generator=g)
        spec = baseline + conc @ bands + 0.01 * torch.randn(bs, n, generator=g)
        y = (conc[:, 0] - 0.5) / 0.2887                     # analyte 0, z-scored
        batches.append((spec.unsqueeze(1), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SpectraCNN()
    steps = 240
    max_lr = (0.005 if fixed else 0.05) * (1.0 + 0.25 * torch.rand(1, generator=g).item())
    opt = TriangularCLRSGD(model.parameters(), base_lr=max_lr / 20, max_lr=max_lr, half_cycle=60,
                           momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=_data(g, steps),
                steps=steps, amp_dtype=None, scaler=None)
