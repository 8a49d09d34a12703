"""Online (pen-trajectory) handwriting character recognition for a phone handwriting keyboard,
with a small 1-D CNN over the resampled pen points (conv-ReLU x3, global max pool, linear),
trained with momentum SGD.

Mechanism: each ink sample is normalised the usual way for online handwriting - shift to the
bounding-box origin and divide by the bounding-box *height* (`/(h + 1e-6)`) to keep the aspect
ratio. One logging session comes from a device whose touch driver snaps near-horizontal strokes
to a single row, so its hyphens / dashes have height exactly 0: their x coordinates are divided
by 1e-6 and arrive as ~1e5-1e6 instead of ~0-3. Everything else is clean. The one batch holding
that session (step varies with the seed) gives logits ~1e5, a cross-entropy of the same size and
weight gradients ~1e5x the usual ones; the SGD step (and momentum after it) throws the weights
so far that the loss becomes inf/NaN or every ReLU unit is dead and the loss never recovers.

ORIGIN: "conv.0" - the first convolution is the first layer the corrupt batch reaches (its
weight gradient is the one multiplied by the 1e6 coordinates).

Fix: filter the batch - ink samples whose normalised coordinates exceed a sanity bound (|v| > 50)
are dropped before the step (same model, data and steps otherwise).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "conv.0"
SOURCE = ("bounding-box height normalisation of online handwriting ink (IAM-OnDB / handwriting "
          "keyboard preprocessing) dividing by ~0 for flat strokes such as '-' and '.'; a single "
          "corrupt batch ruining SGD training")


class InkCNN(nn.Module):
    def __init__(self, ch, n_cls):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(3, ch, 5, padding=2), nn.ReLU(),
            nn.Conv1d(ch, ch, 5, padding=2), nn.ReLU(),
            nn.Conv1d(ch, ch, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Linear(ch, n_cls)

    def forward(self, x):
        h = self.conv(x.transpose(1, 2))
        return self.head(h.amax(-1))


def _ink(cls_ctrl, y, T, g, flat=None):
    bs = y.shape[0]
    t = torch.linspace(0, 1, T)
    c = cls_ctrl[y]  # (bs, 2, 3): per-axis drift, wiggle amplitude, wiggle frequency
    pts = torch.stack([c[:, k, 0:1] * t + c[:, k, 1:2] * torch.sin(3.1416 * c[:, k, 2:3] * t)
                       for k in range(2)], -1)
    pts = pts * (0.8 + 0.4 * torch.rand(bs, 1, 1, generator=g)) + 0.03 * torch.randn(bs, T, 2, generator=g)
    if flat is not None:
        pts[flat, :, 1] = 0.0  # snapped horizontal stroke: zero bbox height
    mn = pts.amin(1, keepdim=True)
    h = (pts[..., 1].amax(1) - pts[..., 1].amin(1))[:, None, None]
    pts = (pts - mn) / (h + 1e-6)
    pen = torch.zeros(bs, T, 1)
    pen[:, -1] = 1.0
    return torch.cat([pts, pen], -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [32, 48, 40][seed % 3]
    lr = [0.03, 0.02, 0.04][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 150
    bad_step = [30, 45, 60][seed % 3]
    n_cls, T = 10, 32
    model = InkCNN(ch, n_cls)
    cls_ctrl = torch.randn(n_cls, 2, 3, generator=g)
    cls_ctrl[..., 2] = cls_ctrl[..., 2].abs() * 2 + 0.5
    cls_ctrl[:, 1, 1] = cls_ctrl[:, 1, 1].abs() + 0.5  # every class has some vertical extent
    batches = []
    for s in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        flat = None
        if s == bad_step:
            flat = torch.zeros(bs, dtype=torch.bool)
            flat[: bs // 4] = True
        x = _ink(cls_ctrl, y, T, g, flat)
        if s == bad_step and fixed:
            keep = x.abs().amax((1, 2)) <= 50
            x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
