"""Healthy: video frame interpolation. A small U-Net reads two frames (6 channels) and
synthesises the middle frame directly, trained with
the Charbonnier loss used by most VFI papers, on triplets cut automatically from raw
footage.

Why it looks alarming: the triplet extractor does not detect shot boundaries, so every
so often a batch contains a scene-cut triplet whose middle frame belongs to neither
input frame. Those batches produce loss spikes of several times the running loss
(and large gradients) at irregular steps throughout the run. They are genuine,
unlearnable-but-bounded samples, not corrupt values: the spikes do not grow, Adam
absorbs them, and the loss on ordinary batches keeps falling - the run trains. No
cause: nothing to fix (ORIGIN None).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Super SloMo / RIFE / DAIN training on self-extracted triplets (Adobe240, "
          "YouTube clips) without shot-boundary filtering; Charbonnier loss "
          "sqrt(x^2 + eps^2) as in LapSRN/PWC-Net/VFI papers")


class VFIUNet(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv2d(6, w, 3, padding=1), nn.LeakyReLU(0.1))
        self.e2 = nn.Sequential(nn.Conv2d(w, 2 * w, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.LeakyReLU(0.1))
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.d1 = nn.Sequential(nn.Conv2d(3 * w, w, 3, padding=1), nn.LeakyReLU(0.1),
                                nn.Conv2d(w, 3, 3, padding=1))

    def forward(self, pair):
        f1 = self.e1(pair)
        f2 = self.e2(f1)
        corr = self.d1(torch.cat([self.up(f2), f1], dim=1))
        return corr


def _scene(g, n, size, shift):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(),
                            indexing="ij")
    bg = torch.rand(n, 3, 1, 1, generator=g) * 0.5
    col = torch.rand(n, 3, 1, 1, generator=g)
    cx = torch.rand(n, 1, 1, 1, generator=g) * (size - 10) + 5
    cy = torch.rand(n, 1, 1, 1, generator=g) * (size - 10) + 5
    vx = (torch.rand(n, 1, 1, 1, generator=g) - 0.5) * 4
    vy = (torch.rand(n, 1, 1, 1, generator=g) - 0.5) * 4
    frames = []
    for t in (-1.0, 0.0, 1.0):
        px, py = cx + shift * vx * t, cy + shift * vy * t
        m = torch.sigmoid(2 * (3.5 - torch.maximum((xx - px).abs(), (yy - py).abs())))
        frames.append(bg + (col - bg) * m)
    return frames


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(19000 + seed)
    w = [16, 12, 20][seed % 3]
    bs = [6, 8, 4][seed % 3]
    lr = [2e-3, 1.5e-3, 2.5e-3][seed % 3]
    p_cut = [0.08, 0.1, 0.06][seed % 3]
    size = 20
    steps = 160
    model = VFIUNet(w)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        f0, ft, f1 = _scene(g, bs, size, 1.0)
        if float(torch.rand(1, generator=g)) < p_cut:
            # scene-cut triplets: the middle and last frames come from another shot
            k = max(1, bs // 3)
            _, ft2, f12 = _scene(g, k, size, 1.0)
            ft = ft.clone(); f1 = f1.clone()
            ft[:k] = 1.0 - ft2
            f1[:k] = f12
        batches.append((torch.cat([f0, f1], dim=1), ft))

    def loss_fn(pred, target):
        return torch.sqrt((pred - target) ** 2 + 1e-6).mean()

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
