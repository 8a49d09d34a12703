"""Anchor-free FCOS-style detector (one FPN level, shared towers, exp(scale*x)*stride box
regression).  FCOS initialises every head conv with normal(std=0.01); here the regression
tower's init loop calls ``nn.init.normal_(l.weight)`` with the std argument forgotten, so PyTorch's
default std=1.0 is used.  With fan-in 9*C each tower conv multiplies the activation scale by
~sqrt(9*C) ~ 12, the bbox_pred pre-activations reach the hundreds at step 0 and exp() overflows to
inf, so the IoU loss on the decoded left/top/right/bottom distances is non-finite on the very first
batch.  The fix is the intended std=0.01 normal init of the regression branch."""
import math
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "bbox_tower.0"
SOURCE = ("FCOS (Tian et al. 2019) head init normal(std=0.01); torch.nn.init.normal_ default std=1.0 "
          "pitfall; FCOS/mmdet issues 'loss_bbox is inf/nan at iteration 0' after custom head init")


class Scale(nn.Module):
    def __init__(self, v=1.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(v))

    def forward(self, x):
        return x * self.scale


class TinyFCOS(nn.Module):
    def __init__(self, c=16, stride=4):
        super().__init__()
        self.stride = stride
        self.backbone = nn.Sequential(
            nn.Conv2d(3, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.cls_tower = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(4, c), nn.ReLU())
        self.bbox_tower = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                                        nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.cls_logits = nn.Conv2d(c, 1, 3, padding=1)
        self.bbox_pred = nn.Conv2d(c, 4, 3, padding=1)
        self.scale = Scale(1.0)

    def forward(self, img):
        f = self.backbone(img)
        cls = self.cls_logits(self.cls_tower(f)).squeeze(1)
        ltrb = torch.exp(self.scale(self.bbox_pred(self.bbox_tower(f)))) * self.stride
        return {"cls": cls, "ltrb": ltrb}


def _images(g, n, size=32, stride=4):
    imgs, cls_t, ltrb_t = [], [], []
    hw = size // stride
    cy, cx = torch.meshgrid(torch.arange(hw), torch.arange(hw), indexing="ij")
    py, px = (cy.float() + 0.5) * stride, (cx.float() + 0.5) * stride
    for _ in range(n):
        w, h = 8 + 14 * torch.rand(2, generator=g)
        x0 = torch.rand(1, generator=g) * (size - w); y0 = torch.rand(1, generator=g) * (size - h)
        x1, y1 = x0 + w, y0 + h
        img = 0.3 * torch.randn(3, size, size, generator=g)
        col = torch.randn(3, 1, 1, generator=g).sign()
        ys, xs = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
        inside = ((xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1)).float()
        img = img + col * inside
        l, t, r, b = px - x0, py - y0, x1 - px, y1 - py
        lt = torch.stack([l, t, r, b])
        pos = (lt.min(0).values > 0).float()
        imgs.append(img); cls_t.append(pos); ltrb_t.append(lt.clamp_min(0.0))
    return torch.stack(imgs), {"cls": torch.stack(cls_t), "ltrb": torch.stack(ltrb_t)}


def _iou_loss(p, t):
    # GIoU loss on (l, t, r, b) distances from the same location (FCOS IOULoss 'giou')
    pl, pt, pr, pb = p.unbind(1); tl, tt, tr, tb = t.unbind(1)
    pa = (pl + pr) * (pt + pb); ta = (tl + tr) * (tt + tb)
    wi = torch.min(pl, tl) + torch.min(pr, tr); hi = torch.min(pt, tt) + torch.min(pb, tb)
    inter = wi * hi; union = pa + ta - inter
    wc = torch.max(pl, tl) + torch.max(pr, tr); hc = torch.max(pt, tt) + torch.max(pb, tb)
    enc = wc * hc + 1e-7
    iou = (inter + 1.0) / (union + 1.0)
    giou = iou - (enc - union) / enc
    return 1 - giou


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyFCOS()
    # cls branch: FCOS init + focal prior bias
    for l in list(model.cls_tower.modules()) + [model.cls_logits]:
        if isinstance(l, nn.Conv2d):
            nn.init.normal_(l.weight, std=0.01); nn.init.constant_(l.bias, 0)
    nn.init.constant_(model.cls_logits.bias, -math.log((1 - 0.01) / 0.01))
    # regression branch
    for l in list(model.bbox_tower.modules()) + [model.bbox_pred]:
        if isinstance(l, nn.Conv2d):
            if fixed:
                nn.init.normal_(l.weight, std=0.01)
            else:
                nn.init.normal_(l.weight)          # std argument forgotten -> std=1.0
            nn.init.constant_(l.bias, 0)
    pool = [_images(g, 8) for _ in range(12)]
    steps = 120
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, y):
        pos = y["cls"] > 0
        npos = pos.sum().clamp_min(1).float()
        cls = sigmoid_focal_loss(out["cls"], y["cls"]).sum() / npos
        p = out["ltrb"].permute(0, 2, 3, 1)[pos]
        t = y["ltrb"].permute(0, 2, 3, 1)[pos]
        reg = _iou_loss(p, t).mean()
        return cls + reg

    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    return a_t * ce * (1 - p_t) ** gamma
