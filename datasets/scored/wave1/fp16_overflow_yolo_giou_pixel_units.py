"""Single-scale YOLO-style detector (strided conv backbone on a 32x32 downsampled image -> 8x8 grid;
per cell an objectness logit and YOLOv5-style box offsets: xy = 2*sigmoid - 0.5 + grid, wh =
(2*sigmoid)^2 * anchor) trained under fp16 autocast with a GIoU box loss. The labels are kept in
the ORIGINAL 512x512 image pixel units, so the decoded predictions are in pixels too (anchor
200x200 px; grid and anchor tensors created with .type_as(pred), i.e. float16). The predicted box
area w*h (both factors come from the detect head's float16 output) is computed in float16: while
predicted boxes are smaller than ~256 x 256 px everything is fine, but as the model learns the
large close-up objects (300-450 px) the predicted area passes 65504 and becomes inf; union = inf,
the enclosing-box term gives finite - inf and the GIoU loss and its gradients turn non-finite a
few dozen steps into training. The fixed run casts the decoded boxes to float32 before the IoU
computation (fp32 for that op), as the Ultralytics loss does; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "detect"
SOURCE = ('Ultralytics YOLOv5 ComputeLoss / bbox_iou (GIoU/CIoU) under autocast; Rezatofighi et al. '
          '2019 GIoU; known pattern: IoU terms computed in image pixels in float16')

G, IMG, STRIDE, ANCHOR = 8, 512.0, 64.0, 200.0


class TinyYOLO(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.SiLU(),
                                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.SiLU(),
                                      nn.Conv2d(32, 32, 3, padding=1), nn.SiLU())
        self.detect = nn.Conv2d(32, 5, 1)

    def forward(self, x):
        return self.detect(self.backbone(x))


def giou(b1, b2, eps=1e-7):
    (x1, y1, x2, y2), (X1, Y1, X2, Y2) = b1.unbind(-1), b2.unbind(-1)
    w1, h1, w2, h2 = x2 - x1, y2 - y1, X2 - X1, Y2 - Y1
    inter = (torch.min(x2, X2) - torch.max(x1, X1)).clamp(0) * (torch.min(y2, Y2) - torch.max(y1, Y1)).clamp(0)
    union = w1 * h1 + w2 * h2 - inter + eps
    iou = inter / union
    cw = torch.max(x2, X2) - torch.min(x1, X1)
    ch = torch.max(y2, Y2) - torch.min(y1, Y1)
    c_area = cw * ch + eps
    return iou - (c_area - union) / c_area


def make_loss(fp32_boxes):
    def loss_fn(p, tgt):
        obj_t, tbox = tgt["obj"], tgt["boxes"]                 # (B,G,G), (B,G,G,4) xyxy in pixels
        l_obj = F.binary_cross_entropy_with_logits(p[:, 0].float(), obj_t)
        pos = obj_t > 0
        ps = p.permute(0, 2, 3, 1)[pos]                         # (N, 5) float16 under autocast
        gy, gx = torch.meshgrid(torch.arange(G), torch.arange(G), indexing="ij")
        grid = torch.stack([gx, gy], -1).expand(*obj_t.shape, 2)[pos].type_as(ps)
        anchor = torch.tensor([ANCHOR, ANCHOR]).type_as(ps)
        xy = (ps[:, 1:3].sigmoid() * 2 - 0.5 + grid) * STRIDE
        wh = (ps[:, 3:5].sigmoid() * 2) ** 2 * anchor
        pbox = torch.cat([xy - wh / 2, xy + wh / 2], 1)
        tb = tbox[pos]
        if fp32_boxes:
            pbox = pbox.float()
        l_box = (1.0 - giou(pbox, tb)).mean()
        return l_obj + l_box
    return loss_fn


def _make_batch(g, n, closeups):
    img = 0.1 * torch.randn(n, 1, 32, 32, generator=g)
    obj = torch.zeros(n, G, G)
    boxes = torch.zeros(n, G, G, 4)
    for i in range(n):
        big = closeups and i % 2 == 0
        for _ in range(1 if big else int(torch.randint(1, 3, (1,), generator=g))):
            w, h = (torch.rand(2, generator=g) * (150 if big else 140) + (300 if big else 60)).tolist()
            cx, cy = (torch.rand(2, generator=g) * (IMG - max(w, h)) + max(w, h) / 2).tolist()
            gx, gy = int(cx // STRIDE), int(cy // STRIDE)
            obj[i, gy, gx] = 1.0
            boxes[i, gy, gx] = torch.tensor([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
            s = 32.0 / IMG
            img[i, 0, int((cy - h / 2) * s):int((cy + h / 2) * s), int((cx - w / 2) * s):int((cx + w / 2) * s)] += 0.8
    return img, {"obj": obj, "boxes": boxes}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 16, closeups=(b % 3 == 2)) for b in range(12)]
    model = TinyYOLO()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=5e-4)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fp32_boxes=fixed), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
