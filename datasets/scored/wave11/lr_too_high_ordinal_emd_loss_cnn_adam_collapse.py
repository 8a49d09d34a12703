"""Ordinal image-quality regressor in the NIMA style: a small CNN maps a texture patch to a softmax
over 8 ordered quality levels and is trained with the squared Earth Mover's Distance between the
predicted and target CDFs (an ordinal-aware loss). The script uses Adam with lr=0.1, a value left
over from an SGD config, instead of ~1e-3. The first Adam steps move every weight by ~lr at once:
the pooled conv features grow by one to two orders of magnitude, the head's logits follow, and
within a few steps the softmax is saturated onto one single level for every input. Through a
saturated softmax the EMD gradient is ~0, so the model keeps predicting that one level and the loss
sits above its starting value for the rest of the run. No inf or NaN ever appears: a silent
stall."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("NIMA (Talebi & Milanfar 2018) squared-EMD loss over ordered score buckets (Hou et al. 2016); "
          "Adam run with an SGD-sized lr saturates the softmax head onto a single class")

K, S = 8, 16


class OrdinalCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(),
                                      nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(32, K)

    def forward(self, x):
        h = self.features(x).mean(dim=(2, 3))
        return F.softmax(self.head(h), dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    steps, B = 150, 32
    xs = torch.arange(S, dtype=torch.float32)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, K, (B,), generator=g)
        freq = 0.04 + 0.05 * y.float() + 0.01 * torch.randn(B, generator=g)   # level ~ texture frequency
        theta = torch.rand(B, generator=g) * math.pi
        ph = torch.rand(B, generator=g) * 2 * math.pi
        X, Y = torch.meshgrid(xs, xs, indexing="xy")
        proj = X[None] * torch.cos(theta)[:, None, None] + Y[None] * torch.sin(theta)[:, None, None]
        img = torch.sin(2 * math.pi * freq[:, None, None] * proj + ph[:, None, None])
        img = img + 0.3 * torch.randn(B, S, S, generator=g)
        batches.append((img.unsqueeze(1), F.one_hot(y, K).float()))
    model = OrdinalCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 1e-1)

    def loss_fn(p, t):
        cdf_p, cdf_t = p.cumsum(-1), t.cumsum(-1)
        return ((cdf_p - cdf_t) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
