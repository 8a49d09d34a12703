"""Analysis-by-synthesis disc autoencoder: a small conv encoder reads a 24x24 image of two
discs, predicts each disc's centre and radius, and a differentiable soft rasteriser renders them
back (occupancy = sigmoid((r - |p - c|) / tau), union = 1 - prod(1 - occ)); the loss is the
pixel MSE against the input. The blur temperature tau = 1e-5 was copied from SoftRas' sigma_val
default, but SoftRas divides the *squared* distance by it while this rasteriser divides the
linear distance in normalised [-1, 1] coordinates, so the pre-activations are ~1e4 and every
sigmoid in the rasteriser is pinned at 0 or 1 except on a sliver a thousandth of a pixel wide.
The rendered silhouette is then piecewise constant in the disc parameters: almost no gradient
reaches the encoder and the reconstruction loss sits on its starting plateau without ever
producing a non-finite value.
Fixed: the rasteriser sigmoid uses a soft edge (tau = 1/12 in normalised units, ~1.5 px), i.e.
smaller pre-activations; nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "raster"
SOURCE = ("Soft Rasterizer (Liu et al. 2019) / Neural 3D Mesh Renderer: with a too small blur "
          "sigma the sigmoid silhouette becomes a hard step and gradients vanish; recurring "
          "'no gradient / loss does not decrease with small sigma' reports for soft rasterisers")

RES = 24


class SoftDiscRaster(nn.Module):
    def __init__(self, res, tau):
        super().__init__()
        lin = (torch.arange(res, dtype=torch.float32) + 0.5) / res * 2 - 1
        gy, gx = torch.meshgrid(lin, lin, indexing="ij")
        self.register_buffer("grid", torch.stack([gx, gy], -1))  # (H, W, 2)
        self.tau = tau

    def forward(self, centres, radii):
        # centres (B, K, 2), radii (B, K)
        d = (self.grid[None, None] - centres[:, :, None, None, :]).pow(2).sum(-1).add(1e-6).sqrt()
        occ = torch.sigmoid((radii[:, :, None, None] - d) / self.tau)  # (B, K, H, W)
        return 1 - torch.prod(1 - occ, dim=1, keepdim=True)


class DiscAutoencoder(nn.Module):
    def __init__(self, n_discs, tau):
        super().__init__()
        self.k = n_discs
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU(),
            nn.Flatten(), nn.Linear(16 * 9, 64), nn.ReLU())
        self.params_head = nn.Linear(64, 3 * n_discs)
        self.raster = SoftDiscRaster(RES, tau)

    def forward(self, img):
        p = self.params_head(self.encoder(img)).view(-1, self.k, 3)
        centres = 0.7 * torch.tanh(p[..., :2])
        radii = 0.15 + 0.2 * torch.sigmoid(p[..., 2])
        return self.raster(centres, radii)


def _make_images(g, n):
    lin = (torch.arange(RES, dtype=torch.float32) + 0.5) / RES * 2 - 1
    gy, gx = torch.meshgrid(lin, lin, indexing="ij")
    c = (torch.rand(n, 2, 2, generator=g) * 2 - 1) * 0.6
    r = 0.18 + 0.15 * torch.rand(n, 2, generator=g)
    d = ((gx[None, None] - c[..., 0, None, None]) ** 2 + (gy[None, None] - c[..., 1, None, None]) ** 2).sqrt()
    occ = (d < r[..., None, None]).float()
    return occ.amax(1, keepdim=True)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    imgs = _make_images(g, 320)
    steps, bs = 150, 32
    batches = []
    for s in range(steps):
        i = (s * bs) % imgs.shape[0]
        x = imgs[i:i + bs]
        batches.append((x, x))
    tau = 1.0 / 12.0 if fixed else 1e-5  # 1e-5: SoftRas sigma_val (meant for squared distances)
    model = DiscAutoencoder(2, tau)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
