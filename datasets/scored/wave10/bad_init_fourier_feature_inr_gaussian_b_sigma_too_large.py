"""Fourier-feature implicit neural representation (Tancik et al. 2020): 2-D pixel coordinates
in [0,1]^2 go through gamma(v) = [sin(2 pi B v), cos(2 pi B v)] with a fixed random Gaussian
matrix B ~ N(0, sigma^2), then a ReLU MLP regresses the RGB value. B is sampled once at
construction and never trained, so its scale IS the initialisation. The run copies sigma=200
(a value tuned for a 1024^2 photo) onto a smooth 64-pixel signal: the features decorrelate
over 1/2500 of the image, so fitting one random batch of coordinates tells the network nothing
about the next one and the training loss stays at the image variance, a quiet stall with no
non-finite value. Fixed: B drawn with sigma=6, a scale that matches the signal's bandwidth."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoding"
SOURCE = ("Tancik et al. 2020 'Fourier Features Let Networks Learn High Frequency Functions' "
          "(Fig. 3: too large a Gaussian scale gives noisy, non-generalising fits); GitHub issues "
          "on fourier-feature-networks about choosing the scale")


class GaussianFourierFeatures(nn.Module):
    def __init__(self, in_dim, n_feats, sigma):
        super().__init__()
        self.register_buffer("B", torch.randn(in_dim, n_feats) * sigma)

    def forward(self, v):
        proj = 2 * math.pi * v @ self.B
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


class FFNet(nn.Module):
    def __init__(self, sigma, n_feats=96, hidden=128):
        super().__init__()
        self.encoding = GaussianFourierFeatures(2, n_feats, sigma)
        self.fc1 = nn.Linear(2 * n_feats, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 3)

    def forward(self, coords):
        h = F.relu(self.fc1(self.encoding(coords)))
        h = F.relu(self.fc2(h))
        return self.out(h)


def _image(params, v):
    # smooth synthetic RGB "photo": a few low-frequency blobs and a gradient
    cx, col = params
    out = torch.zeros(v.shape[0], 3)
    for k in range(cx.shape[0]):
        d2 = ((v - cx[k]) ** 2).sum(-1, keepdim=True)
        out += col[k] * torch.exp(-d2 / 0.03)
    out += 0.5 * torch.sin(6 * v[:, :1]) * torch.cos(5 * v[:, 1:2])
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    model = FFNet(sigma=6.0 if fixed else 400.0)
    steps, bs = 150, 512
    params = (torch.rand(5, 2, generator=g), torch.randn(5, 3, generator=g))
    grid = torch.stack(torch.meshgrid(torch.linspace(0, 1, 64), torch.linspace(0, 1, 64),
                                      indexing="ij"), -1).reshape(-1, 2)
    mean = _image(params, grid).mean(0)   # image is mean-centred per channel
    batches = []
    for s in range(steps):
        v = torch.rand(bs, 2, generator=g)
        batches.append((v, _image(params, v) - mean))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
