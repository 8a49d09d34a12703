"""Tiny NeRF (positional encoding + density/colour MLP + volume rendering)
trained on per-image ray batches, where one image was never registered by
COLMAP.

Mechanism: the pose loader reads images.txt into a dict and, for images COLMAP
failed to register, falls back to a zero quaternion / zero translation
placeholder.  The quaternion is normalised (q / |q|) before being turned into a
rotation matrix, so the unregistered image gets a 0/0 = NaN camera-to-world
matrix and every ray origin/direction of that image is NaN.  Training is
perfectly calm until the step that draws that image: the NaN rays propagate
through the encoding, the MLP and the compositing into a NaN photometric loss
(and NaN gradients for all weights).

ORIGIN: None -- the network is fine; the failure is carried in by one corrupt
batch of rays.

Fix: drop images without a valid registration from the training set (the
corrupt batch is replaced by rays from a registered image).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("nerf-pytorch / nerfstudio issues: 'loss becomes nan' traced to images COLMAP did not "
          "register (missing or placeholder poses) in the transforms / images.txt loader")


def quat_to_rot(q):
    q = q / q.norm()  # zero placeholder quaternion -> NaN
    w, x, y, z = q
    return torch.stack([
        torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)]),
        torch.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)]),
        torch.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]),
    ])


def look_at_quat(cam_pos):
    fwd = -cam_pos / cam_pos.norm()
    up = torch.tensor([0.0, 0.0, 1.0])
    right = torch.linalg.cross(fwd, up); right = right / right.norm()
    up2 = torch.linalg.cross(right, fwd)
    R = torch.stack([right, up2, -fwd], dim=1)
    # rotation matrix -> quaternion (w, x, y, z), as stored by COLMAP
    w = torch.sqrt(torch.clamp(1 + R[0, 0] + R[1, 1] + R[2, 2], min=1e-8)) / 2
    x = (R[2, 1] - R[1, 2]) / (4 * w)
    y = (R[0, 2] - R[2, 0]) / (4 * w)
    z = (R[1, 0] - R[0, 1]) / (4 * w)
    return torch.stack([w, x, y, z])


class PosEnc(nn.Module):
    def __init__(self, n_freq):
        super().__init__()
        self.register_buffer("freqs", 2.0 ** torch.arange(n_freq) * math.pi)

    def forward(self, x):
        xf = x[..., None] * self.freqs
        return torch.cat([x, torch.sin(xf).flatten(-2), torch.cos(xf).flatten(-2)], dim=-1)


class TinyNeRF(nn.Module):
    def __init__(self, width, depth, n_freq, n_samples, near=2.0, far=4.5):
        super().__init__()
        self.n_samples, self.near, self.far = n_samples, near, far
        self.encoding = PosEnc(n_freq)
        layers, d = [], 3 + 6 * n_freq
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.trunk = nn.Sequential(*layers)
        self.sigma_head = nn.Linear(width, 1)
        self.rgb_head = nn.Linear(width, 3)

    def forward(self, rays_o, rays_d):
        t = torch.linspace(self.near, self.far, self.n_samples)
        pts = rays_o[:, None, :] + rays_d[:, None, :] * t[None, :, None]
        h = self.trunk(self.encoding(pts))
        sigma = F.softplus(self.sigma_head(h).squeeze(-1))
        rgb = torch.sigmoid(self.rgb_head(h))
        delta = (self.far - self.near) / (self.n_samples - 1)
        alpha = 1 - torch.exp(-sigma * delta)
        trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], dim=1), dim=1)[:, :-1]
        w = alpha * trans
        return (w[..., None] * rgb).sum(dim=1) + (1 - w.sum(dim=1, keepdim=True))  # white background


def gt_render(rays_o, rays_d, n=96, near=2.0, far=4.5):
    t = torch.linspace(near, far, n)
    p = rays_o[:, None, :] + rays_d[:, None, :] * t[None, :, None]
    r = p.norm(dim=-1)
    sigma = 25.0 * torch.sigmoid((0.8 - r) * 30) + 8.0 * torch.sigmoid((0.35 - (p - torch.tensor([0.5, 0.0, 0.5])).norm(dim=-1)) * 30)
    rgb = torch.stack([0.5 + 0.5 * torch.sin(3 * p[..., 0]), 0.5 + 0.5 * torch.cos(2 * p[..., 2]),
                       torch.sigmoid(3 * p[..., 1])], dim=-1)
    delta = (far - near) / (n - 1)
    alpha = 1 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], dim=1), dim=1)[:, :-1]
    w = alpha * trans
    return (w[..., None] * rgb).sum(dim=1) + (1 - w.sum(dim=1, keepdim=True))


def image_rays(quat, cam_pos, n_rays, g, focal=1.2):
    R = quat_to_rot(quat)
    uv = torch.rand(n_rays, 2, generator=g) * 2 - 1
    dirs = torch.stack([uv[:, 0] / focal, uv[:, 1] / focal, -torch.ones(n_rays)], dim=1)
    d = dirs @ R.t()
    d = d / d.norm(dim=1, keepdim=True)
    return cam_pos.expand(n_rays, 3).clone(), d


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=64, depth=3, n_freq=5, n_samples=24, n_rays=192, lr=3e-3, bad_step=47, n_images=30),
        dict(width=48, depth=4, n_freq=4, n_samples=20, n_rays=256, lr=2e-3, bad_step=71, n_images=24),
        dict(width=80, depth=2, n_freq=6, n_samples=28, n_rays=128, lr=4e-3, bad_step=29, n_images=36),
    ][seed % 3]
    g = torch.Generator().manual_seed(3000 + seed)
    steps = 100

    # camera ring around the object, poses stored COLMAP-style (quaternion + centre)
    poses = []
    for i in range(cfg["n_images"]):
        az = 2 * math.pi * i / cfg["n_images"] + 0.1 * torch.rand(1, generator=g).item()
        el = 0.2 + 0.4 * torch.rand(1, generator=g).item()
        c = torch.tensor([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)]) * 3.2
        poses.append((look_at_quat(c), c))
    bad_image = cfg["n_images"] // 2
    poses[bad_image] = (torch.zeros(4), torch.zeros(3))  # unregistered image placeholder
    valid = [i for i in range(cfg["n_images"]) if i != bad_image]

    order = [valid[int(torch.randint(0, len(valid), (1,), generator=g))] for _ in range(steps)]
    if not fixed:
        order[cfg["bad_step"]] = bad_image  # the fix filters unregistered images out

    batches = []
    for img in order:
        q, c = poses[img]
        ro, rd = image_rays(q, c, cfg["n_rays"], g)
        with torch.no_grad():
            tgt = gt_render(ro, rd) if img != bad_image else torch.full((cfg["n_rays"], 3), 0.5)
        batches.append(((ro, rd), tgt))

    torch.manual_seed(seed)
    model = TinyNeRF(cfg["width"], cfg["depth"], cfg["n_freq"], cfg["n_samples"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
