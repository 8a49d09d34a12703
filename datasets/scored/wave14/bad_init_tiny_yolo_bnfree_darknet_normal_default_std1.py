"""A YOLOv2-tiny-style single-scale grid detector (Darknet conv/LeakyReLU/maxpool backbone,
BatchNorm dropped because training runs on batches of 4-8 images) whose weights_init helper
was written as

    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.normal_(m.weight)          # meant: normal_(m.weight, 0, 0.01)/kaiming

i.e. ``normal_`` with its default std=1.0.

Mechanism: with unit-variance 3x3 filters on C channels every conv multiplies the activation
scale by ~sqrt(9*C*(1+0.1^2)/2) ~ 6-10; through 6-7 BN-free conv layers the grid logits reach
1e5-1e7 at step 0. The objectness BCE and the box/class terms are linear in such logits, so
the loss is huge but finite; the gradients that reach the backbone are of the same monstrous
size, the first SGD step throws the weights to ~1e10 and the next forward overflows to
inf/NaN.

ORIGIN: ``backbone.0`` -- the first conv; each subsequent conv multiplies the blow-up that
starts there by the same factor.

Fix: Kaiming-normal init for the LeakyReLU convs (a=0.1) and a small-std init of the 1x1
detection head; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "backbone.0"
SOURCE = ('Known pattern: hand-written weights_init calling nn.init.normal_(m.weight) with '
          'its default std=1.0 in a BN-free darknet-style detector; loss ~1e6-1e8 at step 0 '
          'and NaN at step 1; fixed by Kaiming init')


class TinyYOLO(nn.Module):
    def __init__(self, widths, n_classes):
        super().__init__()
        layers, c_in = [], 3
        for i, c in enumerate(widths):
            layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.LeakyReLU(0.1)]
            if i < 3:
                layers.append(nn.MaxPool2d(2, 2))
            c_in = c
        self.backbone = nn.Sequential(*layers)
        self.head = nn.Conv2d(c_in, 5 + n_classes, 1)   # tx, ty, tw, th, obj, classes

    def forward(self, x):
        return self.head(self.backbone(x))


def make_batch(g, bs, size, S, n_classes):
    """Images with one or two coloured boxes; target grid (bs, S, S, 5+1) with
    [x_off, y_off, w, h, obj, cls] in the responsible cell."""
    x = 0.1 * torch.randn(bs, 3, size, size, generator=g)
    t = torch.zeros(bs, S, S, 6)
    cell = size // S
    palette = torch.tensor([[1.0, 0.2, 0.2], [0.2, 1.0, 0.2], [0.2, 0.2, 1.0]])
    for i in range(bs):
        for _ in range(int(torch.randint(1, 3, (1,), generator=g))):
            k = int(torch.randint(0, n_classes, (1,), generator=g))
            w = int(torch.randint(size // 8, size // 3, (1,), generator=g))
            h = int(torch.randint(size // 8, size // 3, (1,), generator=g))
            x0 = int(torch.randint(0, size - w, (1,), generator=g))
            y0 = int(torch.randint(0, size - h, (1,), generator=g))
            x[i, :, y0:y0 + h, x0:x0 + w] += palette[k].view(3, 1, 1)
            cx, cy = x0 + w / 2, y0 + h / 2
            gi, gj = min(int(cx // cell), S - 1), min(int(cy // cell), S - 1)
            t[i, gj, gi] = torch.tensor([cx / cell - gi, cy / cell - gj, w / size, h / size, 1.0, k])
    return x, t


def yolo_loss(out, t):
    p = out.permute(0, 2, 3, 1)                   # (B, S, S, 5+C)
    obj = t[..., 4]
    pos = obj > 0
    l_obj = F.binary_cross_entropy_with_logits(p[..., 4], obj, reduction="sum")
    l_xy = ((torch.sigmoid(p[..., 0:2]) - t[..., 0:2]) ** 2).sum(-1)[pos].sum()
    l_wh = ((torch.sigmoid(p[..., 2:4]).sqrt() - t[..., 2:4].sqrt()) ** 2).sum(-1)[pos].sum()
    l_cls = F.cross_entropy(p[..., 5:][pos], t[..., 5][pos].long(), reduction="sum")
    return (5.0 * (l_xy + l_wh) + l_obj + l_cls) / out.shape[0]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(widths=[8, 16, 32, 32, 64, 64], lr=1e-3, bs=8, steps=60),
        dict(widths=[8, 16, 16, 32, 32, 64, 64], lr=5e-4, bs=6, steps=80),
        dict(widths=[16, 16, 32, 64, 64], lr=2e-3, bs=4, steps=50),
    ][seed % 3]
    torch.manual_seed(seed)
    n_classes = 3
    model = TinyYOLO(cfg["widths"], n_classes)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                if m is model.head:
                    nn.init.normal_(m.weight, 0.0, 0.01)
                else:
                    nn.init.kaiming_normal_(m.weight, a=0.1, nonlinearity="leaky_relu")
            else:
                nn.init.normal_(m.weight)                 # default std=1.0
            nn.init.zeros_(m.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(7 + seed)
    batches = [make_batch(g, cfg["bs"], 64, 8, n_classes) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=yolo_loss, batches=batches, steps=cfg["steps"])
