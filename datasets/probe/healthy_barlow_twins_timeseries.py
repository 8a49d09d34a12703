"""Healthy hard negative: Barlow Twins SSL of a 1D-conv encoder on 6-channel IMU windows. The
reference loss, summed over a 512-d embedding, starts near 300, the first grad norm is ~1e3 and
the first SGD step moves BN-followed weights by 50-80% of their norm (update/weight >> 1e-3).
All benign: BN scale invariance grows the weight norms, ratios settle near 1e-2 within ~30 steps
and the loss falls steadily to ~0.65x; halving the lr changes the final loss ~2%. fixed: same run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("facebookresearch/barlowtwins main.py (BN(z1).T @ BN(z2) / N, on_diag + lambda*off_diag, "
          "lambda=0.0051, loss in the hundreds-thousands at start); Barlow Twins / TS2Vec-style "
          "SSL on HAR sensor windows")

STEPS = 160
BATCH = 64
CHANNELS = 6
LENGTH = 64
PROJ = 512
LAMBDA = 0.0051


class BarlowTwins(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(CHANNELS, 32, 5, padding=2), nn.BatchNorm1d(32), nn.ReLU(),
            nn.Conv1d(32, 64, 5, padding=2, stride=2), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 64, 3, padding=1, stride=2), nn.BatchNorm1d(64), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.projector = nn.Sequential(
            nn.Linear(64, 256), nn.BatchNorm1d(256), nn.ReLU(),
            nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(),
            nn.Linear(256, PROJ))
        self.bn = nn.BatchNorm1d(PROJ, affine=False)

    def forward(self, v1, v2):
        return self.bn(self.projector(self.encoder(v1))), self.bn(self.projector(self.encoder(v2)))


def barlow_loss(out, _target):
    z1, z2 = out
    c = z1.t() @ z2 / z1.shape[0]
    on_diag = (torch.diagonal(c) - 1).pow(2).sum()
    off = c - torch.diag_embed(torch.diagonal(c))
    return on_diag + LAMBDA * off.pow(2).sum()


def _windows(g, n):
    """Synthetic IMU windows: activity-specific mixtures of periodic components."""
    act = torch.randint(6, (n,), generator=g)
    t = torch.linspace(0, 1, LENGTH)
    freq = 1.0 + act.float()[:, None] * 1.3 + 0.3 * torch.rand(n, CHANNELS, generator=g)
    phase = 6.283 * torch.rand(n, CHANNELS, generator=g)
    amp = 0.5 + torch.rand(n, CHANNELS, generator=g)
    x = amp[..., None] * torch.sin(6.283 * freq[..., None] * t + phase[..., None])
    return x + 0.2 * torch.randn(n, CHANNELS, LENGTH, generator=g)


def _augment(x, g):
    n = x.shape[0]
    scale = 1 + 0.2 * torch.randn(n, CHANNELS, 1, generator=g)
    shift = int(torch.randint(-8, 9, (1,), generator=g))
    x = torch.roll(x * scale, shifts=shift, dims=-1)
    drop = (torch.rand(n, CHANNELS, 1, generator=g) > 0.15).float()
    return x * drop + 0.1 * torch.randn(x.shape, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    batches = []
    for _ in range(STEPS):
        x = _windows(g, BATCH)
        batches.append(((_augment(x, g), _augment(x, g)), torch.zeros(BATCH)))
    model = BarlowTwins()
    opt = torch.optim.SGD(model.parameters(), lr=0.005, momentum=0.9, weight_decay=1.5e-6)
    return dict(model=model, optimizer=opt, loss_fn=barlow_loss, batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
