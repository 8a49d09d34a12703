"""Edge-aware document image binarization (DIBCO-style degraded pages): a small U-Net
(BatchNorm, 2 levels) predicts foreground (ink) logits; an extra ``SobelEdge`` module inside
the model computes the gradient magnitude of the predicted ink probability map,
sqrt(gx^2 + gy^2), and the loss adds an L1 term between that edge map and the edge map of the
ground truth (stroke-boundary supervision, as in edge-guided binarization / boundary-aware
segmentation). Trained with AdamW.

Mechanism: sqrt has an infinite derivative at 0. On ordinary text crops the predicted map is
never exactly flat, so the run is calm. One batch contains page-margin crops that are pure
paper (clipped to 1.0 by the scanner's white point): the interior of such a crop is exactly
constant, the U-Net's output there is bitwise identical for neighbouring pixels, so gx = gy
= 0 exactly, sqrt(0) = 0 in the forward pass but its backward is 0.5/sqrt(0) = inf, and
inf * 0 (the L1 gradient where edge == target == 0) = NaN. NaN gradients go into every
weight; from the next step on the loss is NaN.

ORIGIN: ``edge`` -- the module whose sqrt produces the first non-finite value (its
backward).

Fix: sqrt(gx^2 + gy^2 + 1e-6) (an epsilon inside the square root); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "edge"
SOURCE = ('Known pattern: gradient-magnitude / Sobel edge terms computed as '
          'torch.sqrt(gx**2 + gy**2) without eps give NaN gradients where the map is '
          'exactly flat; edge-guided document binarization on DIBCO-style crops with blank '
          'page margins')


def cbr(ci, co):
    return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True))


class SobelEdge(nn.Module):
    def __init__(self, eps):
        super().__init__()
        kx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8.0
        self.register_buffer("kx", kx.view(1, 1, 3, 3))
        self.register_buffer("ky", kx.t().contiguous().view(1, 1, 3, 3))
        self.eps = eps

    def forward(self, p):
        gx = F.conv2d(p, self.kx, padding=1)
        gy = F.conv2d(p, self.ky, padding=1)
        return torch.sqrt(gx ** 2 + gy ** 2 + self.eps)


class EdgeAwareUNet(nn.Module):
    def __init__(self, w, eps):
        super().__init__()
        self.enc1 = nn.Sequential(cbr(1, w), cbr(w, w))
        self.enc2 = nn.Sequential(cbr(w, 2 * w), cbr(2 * w, 2 * w))
        self.up = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = nn.Sequential(cbr(2 * w, w), cbr(w, w))
        self.out = nn.Conv2d(w, 1, 1)
        self.edge = SobelEdge(eps)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        d1 = self.dec1(torch.cat([self.up(e2), e1], 1))
        logits = self.out(d1)
        return torch.cat([logits, self.edge(torch.sigmoid(logits))], 1)


def text_crop(g, size):
    """Paper background with stains/bleed-through and random ink strokes."""
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    paper = 0.85 + 0.1 * F.interpolate(torch.rand(1, 1, 4, 4, generator=g), size=(size, size),
                                       mode="bilinear", align_corners=False)[0, 0]
    ink = torch.zeros(size, size, dtype=torch.bool)
    for _ in range(int(torch.randint(3, 7, (1,), generator=g))):          # strokes
        r = int(torch.randint(2, size - 4, (1,), generator=g))
        c0 = int(torch.randint(0, size // 2, (1,), generator=g))
        c1 = c0 + int(torch.randint(size // 4, size // 2, (1,), generator=g))
        ink[r:r + 2, c0:c1] = True
        cc = int(torch.randint(2, size - 3, (1,), generator=g))
        ink[max(0, r - 6):r + 2, cc:cc + 2] = True
    img = torch.where(ink, 0.2 + 0.1 * torch.rand(size, size, generator=g), paper)
    img = img + 0.03 * torch.randn(size, size, generator=g)
    return img.clamp(0, 1), ink.float()


def margin_crop(size):
    """Blank page margin: paper above the scanner white point, clipped to exactly 1.0."""
    return torch.ones(size, size), torch.zeros(size, size)


def edges_of(mask):
    e = torch.zeros_like(mask)
    e[:, 1:] += (mask[:, 1:] != mask[:, :-1]).float()
    e[1:, :] += (mask[1:, :] != mask[:-1, :]).float()
    return (e > 0).float()


def make_batch(g, bs, size, n_margin):
    imgs, masks = [], []
    for i in range(bs):
        img, m = margin_crop(size) if i < n_margin else text_crop(g, size)
        imgs.append(img)
        masks.append(m)
    x = torch.stack(imgs)[:, None]
    m = torch.stack(masks)[:, None]
    e = torch.stack([edges_of(mm[0]) for mm in m])[:, None]
    return (x - 0.8) / 0.2, torch.cat([m, e], 1)


def binarization_loss(out, target):
    logits, edge = out[:, :1], out[:, 1:]
    mask, edge_gt = target[:, :1], target[:, 1:]
    return F.binary_cross_entropy_with_logits(logits, mask) + 0.5 * F.l1_loss(edge, 0.5 * edge_gt)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(w=8, lr=2e-3, bs=6, size=48, steps=60, bad_step=23, n_margin=2),
        dict(w=12, lr=1e-3, bs=4, size=56, steps=70, bad_step=41, n_margin=1),
        dict(w=8, lr=3e-3, bs=8, size=48, steps=50, bad_step=14, n_margin=3),
    ][seed % 3]
    torch.manual_seed(seed)
    model = EdgeAwareUNet(cfg["w"], eps=1e-6 if fixed else 0.0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-4)
    g = torch.Generator().manual_seed(560 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"], cfg["n_margin"] if i == cfg["bad_step"] else 0)
               for i in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=binarization_loss, batches=batches, steps=cfg["steps"])
