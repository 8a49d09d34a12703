"""UI understanding: a small CNN reads a down-sampled, grey-scale app screenshot and regresses the
bounding box (cx, cy, w, h) of the screen's primary call-to-action button, with targets taken from
the crawled view hierarchy and normalised by the root view's bounds (RICO-style data). Smooth-L1
loss, AdamW.

Mechanism: a few crawled hierarchies (here the rows of one batch, at a step that varies with the
seed) have a degenerate root node whose bounds are [0, 0, 0, 0] (a screen captured while a
zero-size overlay window was on top). Normalising the element box by the root width/height
divides by zero, so those rows get inf / NaN targets. The model, the images and every other batch
are fine; the loss of that batch is non-finite and the backward pass writes NaN into every
parameter, so the run is dead from that step on.

ORIGIN: None. The corruption is in the targets; it enters the graph at the loss, not in a module,
so no single module is where the failure starts.

Fix: validate the batch: rows whose normalised targets are non-finite (degenerate root bounds) are
dropped before batching; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("RICO / view-hierarchy UI datasets contain degenerate node bounds; normalising boxes by "
          "a zero screen/root size yields inf/NaN targets (a common data-pipeline bug in UI "
          "element detection, cf. Deka et al. UIST 2017, Zhang et al. 'Screen Recognition' 2021)")

H, W = 48, 28


class ButtonLocator(nn.Module):
    def __init__(self, c, n_blocks):
        super().__init__()
        layers, c_in = [], 1
        for i in range(n_blocks):
            layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.GroupNorm(4, c), nn.ReLU()]
            if i < 2:
                layers.append(nn.MaxPool2d(2))
            c_in = c
        self.backbone = nn.Sequential(*layers)
        self.box_head = nn.Sequential(nn.Flatten(), nn.Linear(c * (H // 4) * (W // 4), 64), nn.ReLU(),
                                      nn.Linear(64, 4))

    def forward(self, x):
        return torch.sigmoid(self.box_head(self.backbone(x)))


def _render(g, n):
    img = torch.zeros(n, 1, H, W)
    boxes = torch.zeros(n, 4)  # x0, y0, x1, y1 in root-view pixels (1080 x 1920 screen)
    for i in range(n):
        for _ in range(4):  # clutter: text blocks, images, list rows
            y0 = int(torch.randint(0, H - 6, (1,), generator=g)); x0 = int(torch.randint(0, W - 6, (1,), generator=g))
            h = int(torch.randint(2, 6, (1,), generator=g)); w = int(torch.randint(3, 12, (1,), generator=g))
            img[i, 0, y0:y0 + h, x0:x0 + w] = 0.3 + 0.3 * torch.rand(1, generator=g)
        h = int(torch.randint(3, 7, (1,), generator=g)); w = int(torch.randint(8, 22, (1,), generator=g))
        y0 = int(torch.randint(0, H - h, (1,), generator=g)); x0 = int(torch.randint(0, W - w, (1,), generator=g))
        img[i, 0, y0:y0 + h, x0:x0 + w] = 1.0
        img[i, 0, y0 + 1:y0 + h - 1, x0 + 1:x0 + w - 1] = 0.85  # filled button with a border
        boxes[i] = torch.tensor([x0, y0, x0 + w, y0 + h], dtype=torch.float) * (1080.0 / W)
    img = img + 0.03 * torch.randn(n, 1, H, W, generator=g)
    return (img - 0.15) / 0.3, boxes


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 16][seed % 3]
    n_blocks = [3, 3, 4][seed % 3]
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    bad_step = [60, 85, 110][seed % 3]
    steps = 140
    img, px = _render(g, steps * bs)
    root = torch.tensor([1080.0, 1920.0]).repeat(steps * bs, 1)
    bad = torch.zeros(steps * bs, dtype=torch.bool)
    lo = bad_step * bs
    bad[lo:lo + bs][torch.rand(bs, generator=g) < 0.2] = True
    bad[lo] = True
    root[bad] = 0.0  # degenerate root node bounds [0, 0, 0, 0]
    cx = (px[:, 0] + px[:, 2]) / 2 / root[:, 0]
    cy = (px[:, 1] + px[:, 3]) / 2 / root[:, 1]
    bw = (px[:, 2] - px[:, 0]) / root[:, 0]
    bh = (px[:, 3] - px[:, 1]) / root[:, 1]
    tgt = torch.stack([cx, cy, bw, bh], 1)
    batches = []
    for i in range(steps):
        x, y = img[i * bs:(i + 1) * bs], tgt[i * bs:(i + 1) * bs]
        if fixed:
            ok = torch.isfinite(y).all(1)
            x, y = x[ok], y[ok]
        batches.append((x, y))
    torch.manual_seed(seed)
    model = ButtonLocator(c, n_blocks)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return {"model": model, "optimizer": opt, "loss_fn": nn.SmoothL1Loss(beta=0.05), "batches": batches,
            "steps": steps}
