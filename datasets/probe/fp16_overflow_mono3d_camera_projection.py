"""Monocular 3-D object detector (FCOS3D / SMOKE-style centre regression) trained under float16
autocast, whose camera projection of the predicted 3-D centre overflows float16.

Mechanism. A small CNN looks at a (downscaled) camera image and regresses the 3-D centre
(X, Y, Z) of the car in it, in metres in the camera frame (depth as Z = 20 * exp(d), as in
FCOS3D). A 2-D re-projection loss projects the predicted centre with the camera intrinsics
K, held in a frozen ``nn.Linear(3, 3)`` called ``project``:  P = K @ [X, Y, Z],  u = P0 / P2,
v = P1 / P2, and compares (u, v) with the labelled 2-D centre in full-resolution pixels.
Under ``torch.autocast(dtype=float16)`` that Linear runs in half precision, so the
homogeneous coordinate P0 = f * X + c_x * Z is stored in float16. With a 1920-2048 px wide
camera (c_x ~ 1000, f ~ 1800-2100) it passes 65504 once a predicted far object (Z ~ 40-80 m,
to the right of the optical axis) is large enough. At the start the depth head predicts
~20 m for everything and nothing overflows; as training teaches the head to put far cars far
away, P0 of the first far/right car becomes inf, u = inf / Z = inf and the loss is inf (the
GradScaler cannot help: it only protects the backward pass, the overflow is in the forward
one). The step where this happens depends on the seed (camera, lr, batch size, data).

ORIGIN = "project": the first module whose output leaves the float16 range; everything
before it (backbone, head) carries ordinary values of a few tens.

Fix (only the root cause): run the projection in float32, the way mmdetection3d wraps its
box coders / projections with ``@force_fp32`` -- autocast disabled and the input cast to
float32 for that one op. Same data, same model, same optimiser, same scaler.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "project"
SOURCE = ("mmdetection3d's @force_fp32 on bbox coders / camera projections and Monodepth2-style "
          "AMP NaN reports: projecting camera-frame points with pixel intrinsics (f*X + c_x*Z) "
          "exceeds the float16 max of 65504 for far objects on high-resolution cameras")

IMG_H, IMG_W = 28, 48

# (full-res width, height, focal, cx, cy): Waymo-front-like, Argoverse2-ring-like, 1080p dashcam
CAMERAS = [
    (1920.0, 1280.0, 2060.0, 960.0, 640.0),
    (2048.0, 1550.0, 1770.0, 1024.0, 775.0),
    (1920.0, 1080.0, 1900.0, 960.0, 540.0),
]


class Mono3DNet(nn.Module):
    def __init__(self, K, width, fp32_projection):
        super().__init__()
        w = width
        self.backbone = nn.Sequential(
            nn.Conv2d(5, w, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1), nn.ReLU(),
        )
        feat = 2 * w * math.ceil(IMG_H / 8) * math.ceil(IMG_W / 8)
        self.head = nn.Sequential(nn.Linear(feat, 64), nn.ReLU(), nn.Linear(64, 3))
        self.project = nn.Linear(3, 3, bias=False)
        with torch.no_grad():
            self.project.weight.copy_(K)
        self.project.weight.requires_grad_(False)
        self.fp32_projection = fp32_projection

    def forward(self, img):
        b = img.shape[0]
        ys = torch.linspace(-1, 1, IMG_H).view(1, 1, IMG_H, 1).expand(b, 1, IMG_H, IMG_W)
        xs = torch.linspace(-1, 1, IMG_W).view(1, 1, 1, IMG_W).expand(b, 1, IMG_H, IMG_W)
        x = torch.cat([img, xs.to(img.dtype), ys.to(img.dtype)], 1)  # CoordConv channels
        r = self.head(self.backbone(x).flatten(1))
        X = 10.0 * r[:, 0]
        Y = 1.0 + r[:, 1]
        Z = 20.0 * torch.exp(r[:, 2].clamp(max=4.0))
        xyz = torch.stack([X, Y, Z], 1)
        if self.fp32_projection:
            with torch.autocast(device_type="cpu", enabled=False):
                P = self.project(xyz.float())
        else:
            P = self.project(xyz)
        uv = P[:, :2] / P[:, 2:3]
        return uv, Z


def _render(gen, n, cam):
    Wf, Hf, f, cx, cy = cam
    Z = 8.0 + 72.0 * torch.rand(n, generator=gen)
    X = (torch.rand(n, generator=gen) * 0.7 - 0.35) * Z
    Y = 0.5 + 0.7 * torch.rand(n, generator=gen)
    u = f * X / Z + cx
    v = f * Y / Z + cy
    # object size in net-image pixels
    sx, sy = IMG_W / Wf, IMG_H / Hf
    half_w = 0.5 * f * 1.8 / Z * sx
    half_h = 0.5 * f * 1.5 / Z * sy
    uc, vc = u * sx, v * sy
    yy = torch.arange(IMG_H).float().view(1, IMG_H, 1) + 0.5
    xx = torch.arange(IMG_W).float().view(1, 1, IMG_W) + 0.5
    inside_x = torch.sigmoid(4 * (half_w.view(n, 1, 1) + 0.5 - (xx - uc.view(n, 1, 1)).abs()))
    inside_y = torch.sigmoid(4 * (half_h.view(n, 1, 1) + 0.5 - (yy - vc.view(n, 1, 1)).abs()))
    mask = (inside_x * inside_y).unsqueeze(1)
    color = 0.3 + 0.7 * torch.rand(n, 3, 1, 1, generator=gen)
    horizon = cy * sy
    sky = torch.tensor([0.55, 0.7, 0.9]).view(1, 3, 1, 1)
    road = torch.tensor([0.35, 0.35, 0.35]).view(1, 3, 1, 1)
    ground = (yy.view(1, 1, IMG_H, 1) > horizon).float()
    bg = sky * (1 - ground) + road * ground
    bg = bg.expand(n, 3, IMG_H, IMG_W)
    img = bg * (1 - mask) + color * mask
    img = img + 0.03 * torch.randn(n, 3, IMG_H, IMG_W, generator=gen)
    img = (img - 0.5) / 0.25
    return img, torch.stack([u, v], 1), Z


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(1000 + seed)
    cam = CAMERAS[seed % len(CAMERAS)]
    Wf, Hf, f, cx, cy = cam
    K = torch.tensor([[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]])
    width = [12, 16, 20][(seed // 3) % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [16, 24, 12][(seed + 1) % 3]
    steps = 200

    model = Mono3DNet(K, width, fp32_projection=fixed)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr,
                            weight_decay=1e-4)

    def loss_fn(out, target):
        uv, Z = out
        uv_gt, Z_gt = target
        du = (uv[:, 0] - uv_gt[:, 0]).abs() / Wf
        dv = (uv[:, 1] - uv_gt[:, 1]).abs() / Hf
        dz = F.smooth_l1_loss(Z.float(), Z_gt, reduction="none") / 10.0
        return (10.0 * (du + dv) + dz).mean()

    batches = []
    for _ in range(steps):
        img, uv, Z = _render(gen, bs, cam)
        batches.append((img, (uv, Z)))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
