"""data_outlier in a multi-task CNN (shape class + object position) hit by one corrupt image.

Mechanism: a small conv trunk shared by two heads, a shape classifier (cross-entropy) and a
position regressor (MSE on the object's centre, in [-1, 1]), trained with SGD + Nesterov
momentum or Adagrad on a sum of the two losses. Training is calm until one batch, at a
seed-dependent step in the middle of the run, carries one corrupt image: a NaN pixel (a
decoding error left as NaN), an inf pixel (a division by a zero exposure in preprocessing) or,
under SGD, an image scaled by 1e9 (a raw sensor dump read with the wrong dtype). A NaN or inf
makes the loss NaN at once; the 1e9 image makes the logits, the squared error and the gradients
~1e18, and the next SGD updates send the weights to inf/NaN.

ORIGIN is None: the failure starts in the input batch, not in a module.
Fixed: the same batches with the corrupt image replaced by its clean version.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum threads 'NaN loss after some iterations' traced to one corrupt image (NaN or "
    "inf pixels from a failed decode or a divide in preprocessing, or a raw uint16/float dump "
    "at the wrong scale); checking torch.isfinite on each batch and dropping it fixes them."
)


class MultiTaskCNN(nn.Module):
    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(1, channels, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
        )
        self.cls_head = nn.Linear(8 * channels, classes)
        self.pos_head = nn.Linear(8 * channels, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.trunk(x)
        return torch.cat([self.cls_head(f), self.pos_head(f)], dim=1)


class MultiTaskLoss(nn.Module):
    """Cross-entropy on the class logits + weighted MSE on the position; the target packs the
    class index (column 0) and the position (columns 1-2)."""

    def __init__(self, classes: int, pos_weight: float) -> None:
        super().__init__()
        self.classes = classes
        self.pos_weight = pos_weight

    def forward(self, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        ce = nn.functional.cross_entropy(out[:, :self.classes], target[:, 0].long())
        mse = nn.functional.mse_loss(out[:, self.classes:], target[:, 1:])
        return ce + self.pos_weight * mse


def _shapes(size: int) -> list[torch.Tensor]:
    c = torch.arange(5, dtype=torch.float32) - 2.0
    yy, xx = torch.meshgrid(c, c, indexing="ij")
    return [
        (xx.abs() + yy.abs() <= 2).float(),             # diamond
        ((xx.abs() <= 2) & (yy.abs() <= 2)).float(),    # square
        ((xx == 0) | (yy == 0)).float(),                # cross
        (xx == yy).float() + (xx == -yy).float(),       # x
        (xx**2 + yy**2 <= 4.5).float() - (xx**2 + yy**2 <= 1).float(),  # ring
    ]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([6, 8, 12])
    size = rng.choice([12, 14, 16])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([120, 150, 200])
    pos_weight = rng.choice([0.5, 1.0, 2.0])
    optim = rng.choice(["nesterov", "adagrad"])
    lr = rng.choice([0.02, 0.05])
    kinds = ["nan_pixel", "inf_pixel", "scaled_1e9"] if optim == "nesterov" else [
        "nan_pixel", "inf_pixel"]
    kind = rng.choice(kinds)
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))

    shapes = _shapes(size)[:classes]
    g = torch.Generator().manual_seed(340_000 + seed)
    batches = []
    for step in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        r0 = torch.randint(0, size - 4, (batch,), generator=g)
        c0 = torch.randint(0, size - 4, (batch,), generator=g)
        x = 0.3 * torch.randn(batch, 1, size, size, generator=g)
        for i in range(batch):
            x[i, 0, r0[i]:r0[i] + 5, c0[i]:c0[i] + 5] += shapes[int(y[i])]
        pos = torch.stack([r0, c0], dim=1).float() / (size - 5) * 2.0 - 1.0
        row = int(torch.randint(0, batch, (1,), generator=g))
        pix = torch.randint(0, size, (2,), generator=g).tolist()
        if step == bad_step and not fixed:
            if kind == "nan_pixel":
                x[row, 0, pix[0], pix[1]] = float("nan")
            elif kind == "inf_pixel":
                x[row, 0, pix[0], pix[1]] = float("inf")
            else:
                x[row] = x[row] * 1e9
        batches.append((x, torch.cat([y.float().unsqueeze(1), pos], dim=1)))

    torch.manual_seed(seed)
    model = MultiTaskCNN(channels, classes)
    if optim == "nesterov":
        opt: torch.optim.Optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9,
                                                     nesterov=True)
    else:
        opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": MultiTaskLoss(classes, pos_weight),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
