"""Monocular depth regressor (small conv encoder-decoder) with a ReLU depth head, trained with
the scale-invariant log loss (SILog, Eigen et al. 2014; BTS/AdaBins variants) on log(pred) -
log(gt). The head's bias starts near the mean scene depth, so every prediction is positive and
the first steps are calm. Scenes contain near surfaces (0.3-0.6 m); Adam pulls those pixels'
predictions down, a few overshoot below zero, the ReLU returns exactly 0 and log(0) = -inf:
the SILog terms become inf - inf = NaN. Nothing in the data or the lr is wrong; the loss takes
a log of a quantity that can legally be 0. The fix is the usual clamp_min(1e-3) before the log."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "head.act"
SOURCE = ("SILog loss (Eigen et al. 2014, BTS/AdaBins) computed on torch.log(pred) of a ReLU depth "
          "head; the usual guard is pred.clamp(min=eps) / a positive min_depth before the log")


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 24, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(24, 24, 3, padding=1), nn.ReLU(),
        )
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                 nn.Conv2d(24, 16, 3, padding=1), nn.ReLU())
        self.head = nn.Sequential()
        self.head.add_module("conv", nn.Conv2d(16, 1, 3, padding=1))
        self.head.add_module("act", nn.ReLU())
        with torch.no_grad():
            self.head.conv.bias.fill_(2.0)           # start near the mean scene depth (m)

    def forward(self, x):
        return self.head(self.dec(self.enc(x))).squeeze(1)


def _scene(g, n, hw=16):
    # depth: a tilted floor plane plus a near box; image: shading that depends on depth
    yy = torch.linspace(0, 1, hw).view(1, hw, 1)
    base = 0.8 + 3.5 * (1 - yy) * (0.6 + 0.8 * torch.rand(n, 1, 1, generator=g))
    depth = base.expand(n, hw, hw).clone()
    for i in range(n):
        r, c = torch.randint(0, hw - 6, (2,), generator=g).tolist()
        depth[i, r:r + 6, c:c + 6] = 0.3 + 0.3 * torch.rand(1, generator=g).item()
    img = torch.stack([1.0 / depth, depth / 5.0, torch.rand(n, hw, hw, generator=g) * 0.2], 1)
    return img, depth


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DepthNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = 200
    batches = [_scene(g, 8) for _ in range(steps)]
    lam = 0.85

    def loss_fn(pred, gt):
        p = pred.clamp_min(1e-3) if fixed else pred
        d = torch.log(p) - torch.log(gt)
        return torch.sqrt((d ** 2).mean() - lam * d.mean() ** 2) * 10.0

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
