"""Autoencoder for binary silhouettes with a hand-written Bernoulli likelihood module.

The `likelihood` module turns decoder logits into per-pixel log-probabilities as log(sigmoid(z)) and
log(1 - sigmoid(z)).  The silhouettes are roughly centred, so a few centre pixels are always on; the
decoder keeps pushing their logits up and once z > ~16.6 float32 sigmoid(z) rounds to exactly 1.0,
log(1 - p) = log(0) = -inf leaves `likelihood`, and 0 * -inf makes the reconstruction loss NaN.
fixed=True: the module uses F.logsigmoid(z) and F.logsigmoid(-z) (same model, data and optimiser).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "likelihood"
SOURCE = ("VAE/autoencoder Bernoulli decoders written as x*log(p) + (1-x)*log(1-p) with p = sigmoid(logits) "
          "(the classic 'NaN in VAE BCE loss' reports): sigmoid saturates to exactly 1.0 in float32 and "
          "log(1-p) = -inf; the standard fix is logsigmoid / BCE-with-logits")


class BernoulliLogProb(nn.Module):
    """Returns stacked (log p, log(1 - p)) for pixel logits z."""
    def __init__(self, stable=False):
        super().__init__()
        self.stable = stable

    def forward(self, z):
        if self.stable:
            return torch.stack([F.logsigmoid(z), F.logsigmoid(-z)])
        p = torch.sigmoid(z)
        return torch.stack([torch.log(p), torch.log(1 - p)])


class SilhouetteAE(nn.Module):
    def __init__(self, n_pix, d_lat=12, d_hid=128, fixed=False):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_pix, d_hid), nn.ReLU(), nn.Linear(d_hid, d_lat))
        self.decoder = nn.Sequential(nn.Linear(d_lat, d_hid), nn.ReLU(), nn.Linear(d_hid, n_pix))
        self.likelihood = BernoulliLogProb(stable=fixed)

    def forward(self, x):
        return self.likelihood(self.decoder(self.encoder(x)))


def bernoulli_nll(logprobs, x):
    log_p, log_1mp = logprobs[0], logprobs[1]
    return -(x * log_p + (1 - x) * log_1mp).sum(dim=1).mean()


def silhouettes(n, size, g):
    c = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    yy, xx = torch.meshgrid(c, c, indexing="ij")
    cx, cy = (torch.rand(n, 2, generator=g) * 2 - 1).unbind(1)          # jitter of +-1 px
    a = 2.5 + 3.0 * torch.rand(n, generator=g)
    b = 2.5 + 3.0 * torch.rand(n, generator=g)
    th = math.pi * torch.rand(n, generator=g)
    dx, dy = xx[None] - cx[:, None, None], yy[None] - cy[:, None, None]
    u = dx * torch.cos(th)[:, None, None] + dy * torch.sin(th)[:, None, None]
    v = -dx * torch.sin(th)[:, None, None] + dy * torch.cos(th)[:, None, None]
    inside = (u / a[:, None, None]) ** 2 + (v / b[:, None, None]) ** 2 <= 1.0
    return inside.float().flatten(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    size, bs, steps = 12, 64, 300
    batches = []
    for _ in range(steps):
        x = silhouettes(bs, size, g)
        batches.append((x, x))
    model = SilhouetteAE(size * size, fixed=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=bernoulli_nll, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
