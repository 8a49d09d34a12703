"""YOLO-style single-shot grid detector (YOLOv1 loss, no BatchNorm) hit by one batch whose
images were never divided by 255.

Mechanism. A small darknet-like backbone (3x3 convs + LeakyReLU(0.1) + max-pool, no
normalisation layers, as in YOLOv1; He-initialised for the leaky units, as darknet ports do)
ends in a 1x1 conv head that predicts, for every cell of an
S x S grid, an objectness score, the box centre offset (sigmoid), sqrt(w), sqrt(h) and class
scores, trained with the YOLOv1 sum-squared loss under SGD + momentum. The data pipeline
normally yields float images in [0, 1]. One code path (the "mosaic" augmentation branch, which
builds its canvas as uint8 and converts it with ``.float()`` but without ``/ 255``) produces a single batch -- at a seed-dependent step -- in [0, 255]. The first
conv sees inputs 255x larger than anything it saw before; since conv + LeakyReLU is positively
homogeneous the whole head output is ~255x too large, the squared-error loss is thousands of
times too large, and the weight gradient of the first conv (input x upstream gradient) is larger
still. One SGD step with momentum throws the weights far away: the loss becomes inf/NaN a
few steps later (or the network is left stuck far above where it was).

ORIGIN = "backbone.0": the first layer that reads the corrupt values (the conv whose input
and weight gradient are the outlier).

Fix (only the root cause): the same batch, scaled to [0, 1] like every other batch
(i.e. the mosaic branch divides by 255). Same images, labels, model and optimiser.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "backbone.0"
SOURCE = ("ultralytics/yolov5 & darknet-port issues where a mosaic / letterbox augmentation branch "
          "returned uint8-range images (missing /255) for some batches, producing a loss spike "
          "and NaN; YOLOv1 (Redmon et al. 2016) sum-squared grid loss, no BatchNorm")

IMG = 32
S = 4
C = 3
CELL = IMG // S


class TinyYOLO(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.LeakyReLU(0.1), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.LeakyReLU(0.1), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.LeakyReLU(0.1), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 4 * w, 3, padding=1), nn.LeakyReLU(0.1),
        )
        self.head = nn.Conv2d(4 * w, 5 + C, 1)
        for m in self.modules():                  # darknet-port style He init for leaky units
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, a=0.1, nonlinearity="leaky_relu")
                nn.init.zeros_(m.bias)
        nn.init.normal_(self.head.weight, std=0.01)

    def forward(self, x):
        p = self.head(self.backbone(x))          # (B, 5+C, S, S)
        p = p.permute(0, 2, 3, 1)
        conf = torch.sigmoid(p[..., 0])
        xy = torch.sigmoid(p[..., 1:3])
        wh = p[..., 3:5]                          # sqrt(w), sqrt(h) in image units (YOLOv1)
        cls = p[..., 5:]
        return conf, xy, wh, cls


def yolo_v1_loss(out, target, l_coord=5.0, l_noobj=0.5):
    conf, xy, wh, cls = out
    obj, txy, twh, tcls = target
    noobj = 1.0 - obj
    coord = ((xy - txy) ** 2).sum(-1) + ((wh - twh) ** 2).sum(-1)
    cls_err = ((cls - tcls) ** 2).sum(-1)
    loss = (l_coord * obj * coord + obj * (conf - 1.0) ** 2 + l_noobj * noobj * conf ** 2
            + obj * cls_err)
    return loss.sum() / conf.shape[0]


def _make_batch(gen, n):
    img = 0.15 + 0.1 * torch.rand(n, 3, 1, 1, generator=gen).expand(n, 3, IMG, IMG).clone()
    obj = torch.zeros(n, S, S)
    txy = torch.zeros(n, S, S, 2)
    twh = torch.zeros(n, S, S, 2)
    tcls = torch.zeros(n, S, S, C)
    palette = torch.tensor([[0.9, 0.15, 0.1], [0.1, 0.85, 0.2], [0.15, 0.2, 0.95]])
    for i in range(n):
        k = int(torch.randint(1, 3, (1,), generator=gen))
        for _ in range(k):
            w = int(torch.randint(5, 15, (1,), generator=gen))
            h = int(torch.randint(5, 15, (1,), generator=gen))
            x0 = int(torch.randint(0, IMG - w + 1, (1,), generator=gen))
            y0 = int(torch.randint(0, IMG - h + 1, (1,), generator=gen))
            c = int(torch.randint(0, C, (1,), generator=gen))
            col = palette[c] * (0.8 + 0.2 * torch.rand(1, generator=gen))
            img[i, :, y0:y0 + h, x0:x0 + w] = col.view(3, 1, 1)
            cx, cy = x0 + w / 2.0, y0 + h / 2.0
            gi, gj = min(int(cx // CELL), S - 1), min(int(cy // CELL), S - 1)
            obj[i, gj, gi] = 1.0
            txy[i, gj, gi] = torch.tensor([cx / CELL - gi, cy / CELL - gj])
            twh[i, gj, gi] = torch.tensor([(w / IMG) ** 0.5, (h / IMG) ** 0.5])
            tcls[i, gj, gi] = 0.0
            tcls[i, gj, gi, c] = 1.0
    img = (img + 0.02 * torch.randn(img.shape, generator=gen)).clamp(0, 1)
    return img, (obj, txy, twh, tcls)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(7919 * seed + 17)
    width = [8, 12, 16][seed % 3]
    lr = [4e-3, 3e-3, 5e-3][(seed // 3) % 3]
    bs = [16, 12, 20][(seed + 2) % 3]
    steps = 180
    bad_step = 30 + (seed * 23) % 90            # step of the un-normalised mosaic batch

    model = TinyYOLO(width)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)

    batches = []
    for t in range(steps):
        img, tgt = _make_batch(gen, bs)
        if t == bad_step and not fixed:
            # the mosaic branch: uint8 canvas -> float, the "/ 255" forgotten
            img = torch.round(img * 255.0)
        batches.append((img, tgt))

    return dict(model=model, optimizer=opt, loss_fn=yolo_v1_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
