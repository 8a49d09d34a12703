"""SSD-style single-level detector (conv backbone to an 8x8 grid, one 8x8-pixel default box per cell;
a classification conv over background + 3 classes and a box conv predicting SSD-encoded offsets
(dx/wa/0.1, dy/ha/0.1, log(w/wa)/0.2, log(h/ha)/0.2); softmax cross-entropy over all cells plus
smooth-L1 on the positive cells; the model returns (cls_logits, box_deltas)). Ground-truth boxes
arrive as raw xyxy pixel coordinates and are encoded inside the loss, as in torchvision's
BoxCoder. One annotation in the data set lies on the right image border; after the usual "clip
boxes to the image" preprocessing it has x1 == x2 (width 0). Its encoded target is log(0 / 8) /
0.2 = -inf, so every time that batch comes round the box loss is +inf (the torchvision detection
reference stops with "Loss is inf, stopping training"); all other batches are fine. The fixed run
drops boxes with non-positive width or height when the annotations are built (the one corrupt row
becomes background); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "box_head"
SOURCE = ('torchvision detection references (training stops when the loss is not finite) and '
          "torchvision's generalized R-CNN check that all boxes have positive height and width; SSD box "
          'encoding (Liu et al. 2016); known pattern: degenerate boxes after clipping to the image')

K, G, S, A = 3, 8, 32, 8.0


class TinySSD(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.cls_head = nn.Conv2d(32, K + 1, 3, padding=1)
        self.box_head = nn.Conv2d(32, 4, 3, padding=1)

    def forward(self, x):
        f = self.backbone(x)
        return self.cls_head(f), self.box_head(f)


def _anchors():
    c = (torch.arange(G).float() + 0.5) * (S / G)
    cy, cx = torch.meshgrid(c, c, indexing="ij")
    return cx, cy


def ssd_loss(out, tgt):
    cls_logits, deltas = out
    labels, boxes = tgt["labels"], tgt["boxes"]          # (B,G,G) long ; (B,G,G,4) xyxy pixels
    l_cls = F.cross_entropy(cls_logits, labels)
    pos = labels > 0
    cx, cy = _anchors()
    cx, cy = cx.expand_as(labels)[pos], cy.expand_as(labels)[pos]
    gt = boxes[pos]
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    gcx, gcy = gt[:, 0] + gw / 2, gt[:, 1] + gh / 2
    target = torch.stack([(gcx - cx) / A / 0.1, (gcy - cy) / A / 0.1,
                          torch.log(gw / A) / 0.2, torch.log(gh / A) / 0.2], 1)
    pred = deltas.permute(0, 2, 3, 1)[pos]
    l_box = F.smooth_l1_loss(pred, target, reduction="sum") / pos.sum().clamp(min=1)
    return l_cls + l_box


def _make_dataset(g, n_batches, bs, drop_degenerate):
    batches = []
    cell = S // G
    for b in range(n_batches):
        img = 0.1 * torch.randn(bs, 1, S, S, generator=g)
        labels = torch.zeros(bs, G, G, dtype=torch.long)
        boxes = torch.zeros(bs, G, G, 4)
        for i in range(bs):
            for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
                c = int(torch.randint(1, K + 1, (1,), generator=g))
                gy, gx = torch.randint(0, G, (2,), generator=g).tolist()
                w, h = torch.randint(4, 13, (2,), generator=g).tolist()
                ox, oy = (torch.rand(2, generator=g) * 2 - 1).tolist()
                cx, cy = gx * cell + cell / 2 + ox, gy * cell + cell / 2 + oy
                x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
                if b == 33 and i == 3 and _ == 0:       # annotation that lies past the right border
                    gx, x1, x2, c = G - 1, S + 1.0, S + 7.0, 1
                    cx = x1
                x1, x2 = min(max(x1, 0.0), float(S)), min(max(x2, 0.0), float(S))   # clip to image
                y1, y2 = min(max(y1, 0.0), float(S)), min(max(y2, 0.0), float(S))
                if drop_degenerate and (x2 - x1 <= 0 or y2 - y1 <= 0):
                    continue
                xi1, xi2, yi1, yi2 = int(x1), int(round(x2)), int(y1), int(round(y2))
                img[i, 0, yi1:yi2, xi1:xi2] = 0.4 * c
                labels[i, gy, gx] = c
                boxes[i, gy, gx] = torch.tensor([x1, y1, x2, y2])
        batches.append((img, {"labels": labels, "boxes": boxes}))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = _make_dataset(g, 40, 8, drop_degenerate=fixed)
    model = TinySSD()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=ssd_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
