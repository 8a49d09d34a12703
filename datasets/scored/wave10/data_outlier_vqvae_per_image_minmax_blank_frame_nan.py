"""A small convolutional VQ-VAE (straight-through estimator, codebook + 0.25 commitment loss)
is trained on 16x16 grey sprite frames. The loader rescales every frame with per-image
min-max normalisation, (x - x.min()) / (x.max() - x.min()). One frame in the stream, at step
70, is a blank (all-zero) capture from a dropped camera frame: its normalisation is 0/0, so that
sample is entirely NaN. The encoder's first convolution turns the NaN pixels into NaN latents,
the NaN reaches the loss and the Adam update, and every later step is NaN. Fixed: the same
stream with the corrupt sample normalised safely (range clamped away from zero, giving an
all-zero frame), i.e. only the bad row differs."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("Per-image min-max normalisation of a constant/blank image producing NaN "
          "(common 'NaN loss after N iterations, one image is all black' reports); VQ-VAE "
          "(van den Oord et al. 2017) training setup")


class VectorQuantizer(nn.Module):
    def __init__(self, k=32, d=8, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(k, d)
        self.codebook.weight.data.normal_(0.0, 0.5)
        self.beta = beta

    def forward(self, z):
        b, d, h, w = z.shape
        flat = z.permute(0, 2, 3, 1).reshape(-1, d)
        dist = (flat ** 2).sum(1, keepdim=True) - 2 * flat @ self.codebook.weight.t() \
            + (self.codebook.weight ** 2).sum(1)[None]
        idx = dist.argmin(1)
        q = self.codebook(idx).view(b, h, w, d).permute(0, 3, 1, 2)
        vq_loss = F.mse_loss(q, z.detach()) + self.beta * F.mse_loss(z, q.detach())
        q_st = z + (q - z).detach()
        return q_st, vq_loss


class VQVAE(nn.Module):
    def __init__(self, c=32, d=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, c, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, d, 1))
        self.vq = VectorQuantizer(32, d)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(d, c, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(c, 1, 4, stride=2, padding=1))

    def forward(self, x):
        q, vq_loss = self.vq(self.encoder(x))
        return {"recon": self.decoder(q), "vq_loss": vq_loss}


def loss_fn(out, target):
    return F.mse_loss(out["recon"], target) + out["vq_loss"]


def _sprites(g, n, size=16):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    imgs = torch.zeros(n, 1, size, size)
    for i in range(n):
        for _ in range(2):
            cx, cy = torch.randint(3, size - 3, (2,), generator=g).tolist()
            r = 2 + 3 * torch.rand(1, generator=g).item()
            inten = 40 + 200 * torch.rand(1, generator=g).item()
            if torch.rand(1, generator=g).item() < 0.5:
                m = ((xx - cx) ** 2 + (yy - cy) ** 2) <= r * r
            else:
                m = ((xx - cx).abs() <= r) & ((yy - cy).abs() <= r * 0.6)
            imgs[i, 0][m] = inten
    return imgs + 5 * torch.rand(imgs.shape, generator=g)  # sensor noise, raw 0..255 counts


def minmax(frame, safe):
    lo, hi = frame.min(), frame.max()
    rng = (hi - lo).clamp_min(1e-6) if safe else (hi - lo)
    return (frame - lo) / rng


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    model = VQVAE()
    steps, bs = 150, 32
    raw = _sprites(g, 384)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, raw.shape[0], (bs,), generator=g)
        frames = [raw[i].clone() for i in idx.tolist()]
        if s == 70:
            frames[5] = torch.zeros_like(frames[5])      # dropped camera frame: all-black capture
        # per-image min-max; the original loader only guarded it in the fixed run
        x = torch.stack([minmax(f, safe=fixed) for f in frames])
        batches.append((x, x))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
