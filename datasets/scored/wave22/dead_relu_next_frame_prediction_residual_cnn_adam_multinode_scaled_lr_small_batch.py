"""Next-frame video prediction CNN (two past frames in, a conv+ReLU trunk predicts the
change that is added to the last frame - the usual residual / "copy last frame"
baseline formulation). The Adam lr in the config (5e-2) had been linearly scaled for
the multi-node reference batch (hundreds of clips); the run uses it unchanged on a
single machine with a batch of 6-8 clips.

Mechanism: the first Adam steps move every weight and bias by ~lr. Frames are
non-negative intensities on a dark (zero) background, so a first-layer filter whose
weights and bias are pushed negative is negative for every input patch: within ~10
steps essentially all channels of the first conv's ReLU output exactly 0 and get 0
gradient, the deeper layers lose their input, and the residual branch collapses to a
constant. The model degenerates to "copy the last frame" and the loss plateaus at
that level for the rest of the run (no non-finite values).

ORIGIN: ``trunk.0`` - the first conv of the trunk, whose ReLU (``trunk.1``) dies and
starves every later layer.

Fix: the un-scaled single-node Adam lr (1e-3 range), model and data unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "trunk.0"
SOURCE = ("video prediction / frame extrapolation repos whose configs carry an lr "
          "linearly scaled for a multi-node batch; issues 'prediction is identical to "
          "the last input frame, all ReLU activations are zero' on single-GPU runs")


class NextFrameCNN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Conv2d(2, width, 5, padding=2), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU()]
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Conv2d(width, 1, 3, padding=1)

    def forward(self, frames):
        return frames[:, 1:2] + self.head(self.trunk(frames))


def _clips(g, n, size):
    # bright squares / bars translating with constant velocity on a dark background
    t = torch.arange(3).float().view(1, 3, 1, 1)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(),
                            indexing="ij")
    vid = torch.zeros(n, 3, size, size)
    for _ in range(2):
        cx = torch.rand(n, 1, 1, 1, generator=g) * (size - 8) + 4
        cy = torch.rand(n, 1, 1, 1, generator=g) * (size - 8) + 4
        vx = torch.randint(-2, 3, (n, 1, 1, 1), generator=g).float()
        vy = torch.randint(-2, 3, (n, 1, 1, 1), generator=g).float()
        r = torch.rand(n, 1, 1, 1, generator=g) * 2 + 2
        px, py = cx + vx * t, cy + vy * t
        vid = vid + torch.sigmoid(3 * (r - torch.maximum((xx - px).abs(), (yy - py).abs())))
    return vid.clamp(0, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    width = [16, 24, 16][seed % 3]
    depth = [3, 4, 4][seed % 3]
    bs = [8, 6, 8][seed % 3]
    lr = [1e-3, 1.2e-3, 8e-4][seed % 3] if fixed else [5e-2, 6e-2, 4e-2][seed % 3]
    steps = 150
    model = NextFrameCNN(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        v = _clips(g, bs, 20)
        batches.append((v[:, :2], v[:, 2:3]))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
