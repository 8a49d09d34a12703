"""Tiny NeRF with depth and opacity supervision (DS-NeRF / object-mask style) on a
synthetic object.

Mechanism: a positional-encoding MLP predicts density (ReLU) and colour (sigmoid) at
stratified samples along each ray; the renderer alpha-composites colour, accumulated
opacity and the expected termination depth.  The loss is colour MSE + opacity-vs-mask
MSE + a depth loss on the rays that hit the object (mask multiplied in).  To make the
depth of semi-transparent rays comparable with the sensor depth, the user normalises it
by the accumulated opacity: depth = sum(w_i t_i) / sum(w_i).  At initialisation the
densities are positive on every ray, so sum(w) > 0 everywhere and the run is calm for
tens of steps.  The opacity loss teaches the network that background rays are empty;
once the ReLU density is exactly zero at every sample of some background ray its
sum(w) is 0 and its depth is 0/0 = NaN; mask * NaN is still NaN, so the loss (and every
gradient) turns NaN mid-run.

ORIGIN is renderer, the volume-rendering module whose division produces the first NaN.

Fix: guard the division, sum(w t) / clamp_min(sum(w), 1e-10) (the original NeRF code
guards its disparity map the same way); everything else unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "renderer"
SOURCE = ("Mildenhall et al. NeRF (raw2outputs; disp_map guarded by max(1e-10, ...)); Deng et "
          "al. DS-NeRF depth supervision; issue reports of NaN depth on empty rays")


class NeRFMLP(nn.Module):
    def __init__(self, n_freq, width, depth):
        super().__init__()
        self.n_freq = n_freq
        d_in = 3 + 3 * 2 * n_freq
        layers = [nn.Linear(d_in, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.trunk = nn.Sequential(*layers)
        self.sigma = nn.Linear(width, 1)
        self.rgb = nn.Linear(width, 3)

    def encode(self, x):
        freqs = 2.0 ** torch.arange(self.n_freq).float() * math.pi
        xf = x.unsqueeze(-1) * freqs
        return torch.cat([x, torch.sin(xf).flatten(-2), torch.cos(xf).flatten(-2)], -1)

    def forward(self, pts):
        h = self.trunk(self.encode(pts))
        return torch.relu(self.sigma(h)).squeeze(-1), torch.sigmoid(self.rgb(h))


class VolumeRenderer(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, sigma, rgb, z_vals, far):
        dists = torch.cat([z_vals[:, 1:] - z_vals[:, :-1], far - z_vals[:, -1:]], -1)
        alpha = 1.0 - torch.exp(-sigma * dists)
        trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
        w = alpha * trans
        rgb_map = (w.unsqueeze(-1) * rgb).sum(1)
        acc = w.sum(1)
        if self.safe:
            depth = (w * z_vals).sum(1) / acc.clamp_min(1e-10)
        else:
            depth = (w * z_vals).sum(1) / acc
        return rgb_map, depth, acc


class TinyNeRF(nn.Module):
    def __init__(self, n_freq, width, depth, safe):
        super().__init__()
        self.field = NeRFMLP(n_freq, width, depth)
        self.renderer = VolumeRenderer(safe)
        self.far = 6.0

    def forward(self, rays_o, rays_d, z_vals):
        pts = rays_o.unsqueeze(1) + rays_d.unsqueeze(1) * z_vals.unsqueeze(-1)
        sigma, rgb = self.field(pts)
        return self.renderer(sigma, rgb, z_vals, self.far)


def make_rays(n, g, radius=1.0):
    # cameras on a sphere of radius 4 looking at jittered points around the origin
    cam = F.normalize(torch.randn(n, 3, generator=g), dim=-1) * 4.0
    look = (torch.rand(n, 3, generator=g) * 2 - 1) * 2.0
    d = F.normalize(look - cam, dim=-1)
    b = (cam * d).sum(-1)
    c = (cam * cam).sum(-1) - radius ** 2
    disc = b ** 2 - c
    hit = disc > 0
    t_hit = -b - torch.sqrt(disc.clamp_min(0))
    p = cam + d * t_hit.unsqueeze(-1)
    color = torch.stack([0.5 + 0.5 * p[:, 0], 0.5 + 0.5 * p[:, 1], 0.5 - 0.4 * p[:, 2]], -1).clamp(0, 1)
    color = torch.where(hit.unsqueeze(-1), color, torch.zeros_like(color))
    depth = torch.where(hit, t_hit, torch.zeros_like(t_hit))
    return cam, d, color, depth, hit.float()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(n_freq=6, width=64, depth=3, rays=256, samples=32, lr=1e-3, steps=120),
        dict(n_freq=5, width=96, depth=2, rays=192, samples=40, lr=7e-4, steps=110),
        dict(n_freq=6, width=48, depth=4, rays=320, samples=24, lr=1e-3, steps=130),
    ][seed % 3]
    model = TinyNeRF(cfg["n_freq"], cfg["width"], cfg["depth"], safe=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    near, far = 2.0, 6.0
    batches = []
    for _ in range(cfg["steps"]):
        o, d, color, depth, mask = make_rays(cfg["rays"], g)
        S = cfg["samples"]
        base = torch.linspace(near, far, S + 1)[:-1]
        z = base + torch.rand(cfg["rays"], S, generator=g) * (far - near) / S   # stratified
        batches.append(((o, d, z), (color, depth, mask)))

    def loss_fn(out, target):
        rgb_map, depth_map, acc = out
        color, depth, mask = target
        return (F.mse_loss(rgb_map, color) + F.mse_loss(acc, mask)
                + 0.1 * (mask * (depth_map - depth) ** 2).mean())

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
