"""Healthy run: two-keypoint localisation on 24x24 images with a small conv net, a DSNT /
soft-argmax readout (softmax over each heatmap, expected normalised coordinates in [-1, 1]) and
a per-keypoint learned Laplace scale b = exp(s) predicted from pooled features. The loss is the
Laplace negative log-likelihood |x - mu| / b + log(2 b), averaged over keypoints and
coordinates, and the model returns a dict {"xy", "log_b"}. Once the localisation error falls
below ~0.5 in normalised units the optimum b is below 0.5 and log(2 b) is negative, so the loss
crosses zero and keeps going down (to about -2.5); the gradient through 1/b also grows as b
shrinks. A negative, still-decreasing loss is the expected behaviour of an NLL with learned
scale, not a bug. Trained with Adam; fixed=True returns the same run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DSNT (Nibali et al. 2018) soft-argmax keypoint regression; heteroscedastic Laplace "
          "NLL with learned scale (Kendall & Gal 2017; RLE, Li et al. 2021) whose loss is negative")

RES, K = 24, 2


class KeypointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, 1, 1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, 1, 2, dilation=2), nn.ReLU(),
            nn.Conv2d(32, 32, 3, 1, 1), nn.ReLU())
        self.heatmap = nn.Conv2d(32, K, 1)
        self.scale = nn.Linear(32, K)
        lin = (torch.arange(RES).float() + 0.5) / RES * 2 - 1
        self.register_buffer("lin", lin)

    def forward(self, x):
        f = self.features(x)
        hm = self.heatmap(f).flatten(2).softmax(-1).view(-1, K, RES, RES)
        xs = (hm.sum(2) * self.lin).sum(-1)
        ys = (hm.sum(3) * self.lin).sum(-1)
        log_b = self.scale(f.mean((2, 3)))
        return {"xy": torch.stack([xs, ys], -1), "log_b": log_b}


def laplace_nll(out, y):
    b = out["log_b"].exp().unsqueeze(-1)
    return ((out["xy"] - y).abs() / b + torch.log(2 * b)).mean()


def _make(g, n):
    yy, xx = torch.meshgrid(torch.arange(RES).float(), torch.arange(RES).float(), indexing="ij")
    pts = torch.rand(n, K, 2, generator=g) * (RES - 6) + 3
    img = 0.2 * torch.randn(n, RES, RES, generator=g)
    for k, amp in enumerate((1.0, -1.0)):
        d2 = (xx - pts[:, k, 0, None, None]) ** 2 + (yy - pts[:, k, 1, None, None]) ** 2
        img = img + amp * torch.exp(-d2 / 3.0)
    target = (pts + 0.5) / RES * 2 - 1
    return img.unsqueeze(1), target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(21000 + seed)
    x, y = _make(g, 512)
    steps, bs = 150, 16
    batches = [(x[(s * bs) % 512:(s * bs) % 512 + bs], y[(s * bs) % 512:(s * bs) % 512 + bs]) for s in range(steps)]
    model = KeypointNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=laplace_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
