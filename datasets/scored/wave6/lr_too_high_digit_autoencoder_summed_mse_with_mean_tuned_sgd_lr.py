"""Fully-connected autoencoder (nn.Sequential, 64-32-8-32-64) on 8x8 digit-like images, trained with
plain SGD at lr=0.5, a value the author had tuned with the default F.mse_loss (mean over the
batch and pixels). Following the PyTorch VAE example, the reconstruction loss was then switched to
reduction='sum' ("the loss of a batch is the sum over pixels and images"), which multiplies every
gradient by B*64 = 4096 while the lr stayed at 0.5: the effective step is 4096x the tuned one, the
first updates overshoot, weights and loss grow geometrically and the run reaches inf/NaN within a
few steps. Fix: scale the lr down by the same factor (0.5 / 4096); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("pytorch/examples vae/main.py (reconstruction loss with reduction='sum', tuned for Adam) reused with an "
          "SGD learning rate tuned for a mean-reduced loss; forum threads 'loss becomes nan after switching to "
          "reduction=sum'")

B = 64


def _digits(g, templates, n):
    cls = torch.randint(0, 10, (n,), generator=g)
    img = templates[cls] * (0.7 + 0.3 * torch.rand(n, 1, 1, generator=g))
    img = img + 0.1 * torch.rand(n, 8, 8, generator=g)
    return img.clamp(0, 1).reshape(n, 64)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    templates = (torch.rand(10, 8, 8, generator=g) < 0.3).float()
    model = nn.Sequential(
        nn.Linear(64, 32), nn.ReLU(),
        nn.Linear(32, 8), nn.ReLU(),
        nn.Linear(8, 32), nn.ReLU(),
        nn.Linear(32, 64),
    )
    lr = 0.5 / (B * 64) if fixed else 0.5
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    steps = 200
    batches = []
    for _ in range(steps):
        x = _digits(g, templates, B)
        batches.append((x, x))
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, y: F.mse_loss(out, y, reduction="sum"),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
