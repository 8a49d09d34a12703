"""Vision component ("V") of a World-Models style agent: a small convolutional VAE on depth frames.

Data: 16x16 synthetic depth images of a corridor with boxes, rendered in metres and normalised by
the sensor's max range to [0, 1] (what the encoder expects).

Mechanism: one rollout shard (the step it lands on varies with the seed) was written from the raw
16-bit depth stream without the invalid-pixel pass: pixels the sensor could not measure (dropouts
on the box edges and beyond range) keep the uint16 sentinel 65535 instead of being masked.  That
batch reaches the encoder with values ~6.5e4 instead of <= 1: mu and log-variance become ~1e4, the
reparameterisation's exp(0.5 * logvar) overflows to inf and the loss of that step is non-finite
(and, had it not been, the SGD step on that gradient would have wrecked the weights).

ORIGIN: "enc.0", the first convolution the corrupt frames pass through; the fault is in the data,
but this is where the out-of-range values first enter the network.

Fix: apply the invalid-pixel pass to every shard (sentinel pixels -> 1.0, i.e. max range) so the
corrupt batch becomes an ordinary one; model, optimiser and all other batches unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "enc.0"
SOURCE = ("Invalid depth pixels stored as 65535 / 0 sentinels in 16-bit depth images (RealSense / "
          "Kinect raw streams); World Models (Ha & Schmidhuber 2018) VAE on rollout frames; "
          "NaN loss from a single unnormalised batch is a common VAE training report")

SENTINEL = 65535.0


class DepthVAE(nn.Module):
    def __init__(self, ch, z_dim):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, ch, 4, 2, 1), nn.ReLU(),
                                 nn.Conv2d(ch, 2 * ch, 4, 2, 1), nn.ReLU(), nn.Flatten())
        self.mu = nn.Linear(2 * ch * 16, z_dim)
        self.logvar = nn.Linear(2 * ch * 16, z_dim)
        self.dec_in = nn.Linear(z_dim, 2 * ch * 16)
        self.dec = nn.Sequential(nn.ReLU(), nn.Unflatten(1, (2 * ch, 4, 4)),
                                 nn.ConvTranspose2d(2 * ch, ch, 4, 2, 1), nn.ReLU(),
                                 nn.ConvTranspose2d(ch, 1, 4, 2, 1))
        self.noise = torch.Generator().manual_seed(0)

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        eps = torch.randn(mu.shape, generator=self.noise)
        z = mu + torch.exp(0.5 * logvar) * eps
        return self.dec(self.dec_in(z)), mu, logvar


def _vae_loss(out, x):
    recon, mu, logvar = out
    rec = ((recon - x) ** 2).sum(dim=(1, 2, 3)).mean()
    kl = (-0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(-1)).mean()
    return rec + kl


def _frames(n, g):
    cols = torch.arange(16).float()
    rows = torch.arange(16).float().unsqueeze(1)
    # corridor: depth grows towards the image centre column, floor nearer at the bottom
    centre = 6 + 4 * torch.rand(n, 1, 1, generator=g)
    base = 0.9 - 0.05 * (cols.view(1, 1, 16) - centre).abs() - 0.02 * (rows.view(1, 16, 1) - 4).clamp_min(0)
    img = base.expand(n, 16, 16).clone()
    for i in range(n):
        for _ in range(2):
            r0, c0 = torch.randint(2, 12, (2,), generator=g).tolist()
            h, w = torch.randint(2, 5, (2,), generator=g).tolist()
            d = 0.2 + 0.4 * torch.rand(1, generator=g).item()
            img[i, r0:r0 + h, c0:c0 + w] = torch.minimum(img[i, r0:r0 + h, c0:c0 + w], torch.tensor(d))
    img = (img + 0.01 * torch.randn(img.shape, generator=g)).clamp(0.05, 1.0)
    return img.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [8, 12, 16][seed % 3]
    z_dim = [8, 16, 12][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = [5e-4, 3e-4, 4e-4][seed % 3]
    bad_step = [37, 58, 81][seed % 3]
    steps = 150

    torch.manual_seed(seed)
    model = DepthVAE(ch, z_dim)

    batches = []
    for t in range(steps):
        x = _frames(batch, g)
        if t == bad_step:
            invalid = torch.rand(x.shape, generator=g) < 0.15
            x = torch.where(invalid, torch.full_like(x, SENTINEL), x)   # raw uint16 dropouts
            if fixed:
                x = torch.where(x >= SENTINEL, torch.ones_like(x), x)   # invalid-pixel pass
        batches.append((x, x))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": _vae_loss, "batches": batches,
            "steps": steps}
