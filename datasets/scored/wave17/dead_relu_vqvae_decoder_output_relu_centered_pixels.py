"""VQ-VAE (conv encoder, nearest-neighbour codebook with straight-through estimator, codebook +
commitment losses, conv decoder) on 16x16 images, Adam, MSE reconstruction.

Mechanism: as in the VQ-VAE paper's data pipeline the images are centred to x - 0.5 (range
[-0.5, 0.5], mostly -0.5 background), but the decoder still ends in nn.ReLU() copied from a
[0, 1]-pixel autoencoder. Every background pixel pushes the final conv's pre-activation below
zero; within a few Adam steps the final ReLU is inactive for every pixel of every image, its
gradient is exactly zero, nothing upstream receives reconstruction gradient and the loss plateaus
at mean(x^2). ORIGIN: that final ReLU of the decoder (decoder.5), the unit that dies.
Fix: drop the output ReLU (linear output for centred data).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "decoder.5"
SOURCE = "VQ-VAE re-implementations (x - 0.5 preprocessing) with a ReLU left on the decoder output; reconstructions all zero and loss flat"


class VectorQuantizer(nn.Module):
    def __init__(self, k, d, beta=0.25):
        super().__init__()
        self.emb = nn.Embedding(k, d)
        self.emb.weight.data.uniform_(-1 / k, 1 / k)
        self.beta = beta

    def forward(self, z):
        zf = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        d = zf.pow(2).sum(1, keepdim=True) - 2 * zf @ self.emb.weight.t() + self.emb.weight.pow(2).sum(1)
        q = self.emb(d.argmin(1)).view(z.shape[0], z.shape[2], z.shape[3], -1).permute(0, 3, 1, 2)
        vq_loss = F.mse_loss(q, z.detach()) + self.beta * F.mse_loss(z, q.detach())
        return z + (q - z).detach(), vq_loss


class VQVAE(nn.Module):
    def __init__(self, c, k, d, out_relu):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, c, 4, 2, 1), nn.ReLU(), nn.Conv2d(c, c, 4, 2, 1), nn.ReLU(), nn.Conv2d(c, d, 1))
        self.vq = VectorQuantizer(k, d)
        self.decoder = nn.Sequential(nn.Conv2d(d, c, 3, 1, 1), nn.ReLU(), nn.ConvTranspose2d(c, c, 4, 2, 1), nn.ReLU(),
                                     nn.ConvTranspose2d(c, 1, 4, 2, 1), nn.ReLU() if out_relu else nn.Identity())

    def forward(self, x):
        q, vq_loss = self.vq(self.encoder(x))
        return self.decoder(q), vq_loss


def loss_fn(out, x):
    xr, vq_loss = out
    return F.mse_loss(xr, x) + vq_loss


def _images(g, n):
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    x0 = torch.randint(1, 9, (n, 1, 1), generator=g).float()
    y0 = torch.randint(1, 9, (n, 1, 1), generator=g).float()
    w = torch.randint(3, 7, (n, 1, 1), generator=g).float()
    img = ((xx >= x0) & (xx < x0 + w) & (yy >= y0) & (yy < y0 + w)).float()
    return img.unsqueeze(1) - 0.5


def build(seed, fixed=False):
    cfg = [dict(c=16, k=32, d=8, lr=2e-3, bs=32), dict(c=20, k=64, d=8, lr=1.5e-3, bs=16), dict(c=12, k=16, d=8, lr=3e-3, bs=24)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VQVAE(cfg["c"], cfg["k"], cfg["d"], out_relu=not fixed)
    steps = 120
    batches = [(x, x) for x in (_images(g, cfg["bs"]) for _ in range(steps))]
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
