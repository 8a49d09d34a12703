"""Mixup training of a small CNN that classifies camera-trap style image crops.  The input
pipeline standardises every image by its own mean and standard deviation (hand-written
``(img - img.mean()) / img.std()``), then mixup blends each image with a shuffled partner
(lambda ~ Beta(0.4, 0.4)) and the soft targets are trained with KL divergence
(``KLDivLoss(log_softmax(logits), mixed_one_hot)``) under RMSprop.

Mechanism: at one step (varying with the seed) the batch contains a blank frame -- a dropped
camera frame delivered as a constant image.  Its standard deviation is exactly 0, so the per-image
standardisation gives 0/0 = NaN in every pixel.  Mixup then spreads the NaNs to the partner image
it is blended with, the first convolution turns them into NaN feature maps and the loss of that
batch is NaN (the run would write NaN into every weight at the update).  All other batches are
normal.

ORIGIN = "features.0": the first convolution is the first module the corrupt batch reaches; the
fault itself is in the data, not in any layer.

Fix: filter the batch -- images that are non-finite after preprocessing (the blank frame) are
dropped before mixing, as a data-validation step would do; model, optimiser and steps unchanged.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = ("Per-image standardisation without an epsilon on blank/dropped frames (the reason "
          "tf.image.per_image_standardization clamps the std at 1/sqrt(N)); NaN batches spread by "
          "mixup (Zhang et al. 2018) to the partner sample; camera-trap empty/corrupt frames.")


class SmallCNN(nn.Module):
    def __init__(self, c1, c2, n_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(c2 * 16, n_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def _images(g, n, n_classes, protos):
    y = torch.randint(0, n_classes, (n,), generator=g)
    base = protos[y]
    shift = torch.randint(-2, 3, (2,), generator=g)
    base = torch.roll(base, shifts=(int(shift[0]), int(shift[1])), dims=(2, 3))
    light = 0.5 + torch.rand(n, 1, 1, 1, generator=g)
    img = 120 + 60 * light * base + 20 * torch.randn(n, 3, 16, 16, generator=g)
    return img.clamp(0, 255), y


def build(seed: int, fixed: bool = False) -> dict:
    rnd = random.Random(seed)

    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(400 + seed)
    c1 = pick(1, [8, 12, 16])
    c2 = pick(2, [16, 24, 32])
    lr = pick(3, [1e-3, 2e-3, 5e-4])
    batch = pick(4, [24, 32, 40])
    steps = 90
    bad_step = pick(5, [23, 41, 58, 67])
    n_classes = 6

    protos = torch.randn(n_classes, 3, 16, 16, generator=g)
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1) * 2.0

    model = SmallCNN(c1, c2, n_classes)
    beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))

    batches = []
    for s in range(steps):
        img, y = _images(g, batch, n_classes, protos)
        if s == bad_step:
            img[rnd.randrange(batch)] = 0.0  # dropped frame: constant image
        mean = img.mean(dim=(1, 2, 3), keepdim=True)
        std = img.std(dim=(1, 2, 3), keepdim=True)
        x = (img - mean) / std
        if fixed:
            ok = torch.isfinite(x).flatten(1).all(1)
            x, y = x[ok], y[ok]
        lam = float(beta.sample())
        perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(seed * 1000 + s))
        target = F.one_hot(y, n_classes).float()
        x_mix = lam * x + (1 - lam) * x[perm]
        t_mix = lam * target + (1 - lam) * target[perm]
        batches.append((x_mix, t_mix))

    kl = nn.KLDivLoss(reduction="batchmean")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.9)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, t: kl(F.log_softmax(out, -1), t),
            "batches": batches, "steps": steps}
