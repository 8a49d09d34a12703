"""Faster R-CNN region proposal network whose shared 3x3 conv is born dead: the focal-loss
prior bias meant for a classification *logit* was applied to every conv in the head's init
loop, including the hidden conv that feeds a ReLU.

Mechanism. The RPN head (torchvision's RPNHead, the version that calls ``F.relu`` on the
shared conv) is: ``t = relu(conv(feature))``, ``objectness = cls_logits(t)``,
``deltas = bbox_pred(t)``. Its init loop draws N(0, 0.01) weights -- and, copied from a
RetinaNet/FCOS head, sets every bias to the prior value -log((1 - pi) / pi) = -4.6
(pi = 0.01) instead of 0. With 0.01-std weights over a 3x3xC window of backbone features of
order 1 the conv's pre-activation is about +-0.1, so with the -4.6 bias it is negative at
every position of every image: the ReLU outputs exact zeros from step 0, passes no
gradient, and the backbone and the conv never receive any. The two 1x1 siblings see a
constant zero map; only their biases can move. Anchors are sampled 50/50 positive/negative
(RPN positive_fraction 0.5), so the best constant objectness is p = 0.5 -- where the
zero-bias logit already is -- and the best constant box delta is ~0: the loss sits at
~0.69 + const for the whole run.

ORIGIN = "rpn_head.conv": the conv whose fused (functional) ReLU output is identically zero
-- the layer whose bias init is the root cause.

Fix (only the root cause): init the hidden conv's bias to 0 as torchvision does (the
prior bias is left where it belongs: nowhere here, the logits stay at bias 0). Same data,
model, optimiser and lr.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "rpn_head.conv"
SOURCE = ("torchvision RPNHead (t = F.relu(self.conv(x))) with an init loop copied from "
          "RetinaNet/FCOS (prior_prob = 0.01 bias) applied to every conv; common 'RPN loss "
          "stuck at 0.69 / objectness not learning' reports caused by dead ReLUs")

IMG = 32
STRIDE = 4
G = IMG // STRIDE


class RPNHead(nn.Module):
    def __init__(self, c, num_anchors, hidden_bias):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.cls_logits = nn.Conv2d(c, num_anchors, 1)
        self.bbox_pred = nn.Conv2d(c, num_anchors * 4, 1)
        for l in [self.conv, self.cls_logits, self.bbox_pred]:
            nn.init.normal_(l.weight, std=0.01)
            nn.init.constant_(l.bias, 0.0)
        nn.init.constant_(self.conv.bias, hidden_bias)

    def forward(self, x):
        t = F.relu(self.conv(x))
        return self.cls_logits(t), self.bbox_pred(t)


class TinyRPN(nn.Module):
    def __init__(self, c, num_anchors, hidden_bias):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, c // 2, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c // 2, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
        )
        self.rpn_head = RPNHead(c, num_anchors, hidden_bias)
        self.A = num_anchors

    def forward(self, img):
        logits, deltas = self.rpn_head(self.backbone(img))
        b = img.shape[0]
        logits = logits.permute(0, 2, 3, 1)                               # (B,G,G,A)
        deltas = deltas.view(b, self.A, 4, G, G).permute(0, 3, 4, 1, 2)    # (B,G,G,A,4)
        return logits, deltas


def _anchors(sizes):
    c = (torch.arange(G).float() + 0.5) * STRIDE
    cy, cx = torch.meshgrid(c, c, indexing="ij")
    boxes = []
    for s in sizes:
        boxes.append(torch.stack([cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2], -1))
    return torch.stack(boxes, 2)                                          # (G,G,A,4)


def _iou(a, b):
    x1 = torch.maximum(a[..., 0:1], b[:, 0])
    y1 = torch.maximum(a[..., 1:2], b[:, 1])
    x2 = torch.minimum(a[..., 2:3], b[:, 2])
    y2 = torch.minimum(a[..., 3:4], b[:, 3])
    inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    aa = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]))[..., None]
    ab = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (aa + ab - inter)


def _encode(anc, gt):
    aw, ah = anc[..., 2] - anc[..., 0], anc[..., 3] - anc[..., 1]
    ax, ay = anc[..., 0] + aw / 2, anc[..., 1] + ah / 2
    gw, gh = gt[..., 2] - gt[..., 0], gt[..., 3] - gt[..., 1]
    gx, gy = gt[..., 0] + gw / 2, gt[..., 1] + gh / 2
    return torch.stack([(gx - ax) / aw, (gy - ay) / ah, torch.log(gw / aw), torch.log(gh / ah)], -1)


def _make_batch(gen, n, anchors, per_img):
    A = anchors.shape[2]
    img = 0.2 * torch.rand(n, 3, 1, 1, generator=gen) + 0.1 * torch.randn(n, 3, IMG, IMG, generator=gen)
    labels = torch.zeros(n, G, G, A)
    weight = torch.zeros(n, G, G, A)
    tdelta = torch.zeros(n, G, G, A, 4)
    for i in range(n):
        k = int(torch.randint(1, 4, (1,), generator=gen))
        gts = []
        for _ in range(k):
            w = float(torch.randint(6, 17, (1,), generator=gen))
            h = float(torch.randint(6, 17, (1,), generator=gen))
            x0 = float(torch.randint(0, int(IMG - w) + 1, (1,), generator=gen))
            y0 = float(torch.randint(0, int(IMG - h) + 1, (1,), generator=gen))
            col = 0.5 + 0.5 * torch.rand(3, generator=gen)
            img[i, :, int(y0):int(y0 + h), int(x0):int(x0 + w)] += col.view(3, 1, 1)
            gts.append([x0, y0, x0 + w, y0 + h])
        gt = torch.tensor(gts)
        iou = _iou(anchors, gt)                                  # (G,G,A,k)
        best, idx = iou.max(-1)
        pos = best >= 0.5
        flat = iou.reshape(-1, iou.shape[-1])
        pos.view(-1)[flat.argmax(0)] = True                      # best anchor for every GT
        neg = (best < 0.3) & ~pos
        pos_i = pos.view(-1).nonzero().squeeze(1)
        neg_i = neg.view(-1).nonzero().squeeze(1)
        npos = min(per_img, pos_i.numel(), neg_i.numel())
        pos_i = pos_i[torch.randperm(pos_i.numel(), generator=gen)[:npos]]
        neg_i = neg_i[torch.randperm(neg_i.numel(), generator=gen)[:npos]]
        labels[i].view(-1)[pos_i] = 1.0
        weight[i].view(-1)[pos_i] = 1.0
        weight[i].view(-1)[neg_i] = 1.0
        tdelta[i] = _encode(anchors, gt[idx])
    return img, (labels, weight, tdelta)


def rpn_loss(out, target):
    logits, deltas = out
    labels, weight, tdelta = target
    nsamp = weight.sum().clamp(min=1.0)
    obj = (F.binary_cross_entropy_with_logits(logits, labels, reduction="none") * weight).sum() / nsamp
    pos = labels > 0
    box = F.smooth_l1_loss(deltas[pos], tdelta[pos], beta=1.0 / 9, reduction="sum") / nsamp
    return obj + box


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(31337 + 11 * seed)
    c = [32, 24, 40][seed % 3]
    sizes = [[12], [10], [14]][(seed // 3 + seed) % 3]          # one anchor per location
    bs = [8, 12, 6][(seed + 1) % 3]
    lr = [0.03, 0.02, 0.04][seed % 3]
    steps = 240
    prior_bias = -math.log((1 - 0.01) / 0.01)                 # -4.595, RetinaNet prior

    anchors = _anchors(sizes)
    model = TinyRPN(c, len(sizes), hidden_bias=0.0 if fixed else prior_bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)

    batches = [_make_batch(gen, bs, anchors, per_img=8) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=rpn_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
