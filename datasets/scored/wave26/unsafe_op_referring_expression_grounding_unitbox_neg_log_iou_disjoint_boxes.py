"""One-stage referring-expression grounder ("the red cube" -> its box): the expression is embedded
(bag of tokens), attends over a grid of region features; the box centre is the attention-weighted
(soft-argmax) cell position and an MLP regresses the box size through a sigmoid; trained with 5 x L1 on the box
plus the UnitBox IoU loss -ln(IoU(pred, gt));  Adam.

Mechanism: -ln(IoU) is written literally, `-torch.log(iou)`.  At init the predicted boxes are the
whole-image prior (size-head bias set so w = h ~ 0.92) centred on the attention's soft-argmax, they
overlap every target, and the loss is calm and decreasing.  Within the first few updates, as the boxes tighten to
the size of the (small) objects, a prediction that still points at the wrong place (a distractor
with the same colour, an object near the border) no longer overlaps its target at all: the clamped
intersection is exactly 0, IoU = 0 and log(0) = -inf -- the loss is inf and the backward pass
produces NaN gradients (0 * inf) on the first such batch.

ORIGIN: None -- the non-finite value is created by log(IoU) in the loss function, not inside a
module; the grounder's outputs are ordinary in-range boxes.

Fix: clamp the IoU before the log, `-torch.log(iou.clamp_min(1e-6))` (epsilon), so disjoint boxes
give a large finite loss; same model, data and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Yu et al. 2016 'UnitBox: An Advanced Object Detection Network' (IoU loss -ln(IoU)); "
          "Rezatofighi et al. 2019 'Generalized IoU' (IoU loss has no gradient / is undefined for "
          "non-overlapping boxes); one-stage visual grounding re-implementations reporting inf loss")


def box_iou(p, t):
    p1, p2 = p[:, :2] - p[:, 2:] / 2, p[:, :2] + p[:, 2:] / 2
    t1, t2 = t[:, :2] - t[:, 2:] / 2, t[:, :2] + t[:, 2:] / 2
    wh = (torch.min(p2, t2) - torch.max(p1, t1)).clamp(min=0)
    inter = wh[:, 0] * wh[:, 1]
    union = p[:, 2] * p[:, 3] + t[:, 2] * t[:, 3] - inter
    return inter / union


class Grounder(nn.Module):
    def __init__(self, c_in, vocab, d, G):
        super().__init__()
        self.cell = nn.Sequential(nn.Linear(c_in, d), nn.ReLU(), nn.Linear(d, d))
        self.expr = nn.EmbeddingBag(vocab, d, mode="mean")
        self.q = nn.Linear(d, d)
        self.size_head = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, 2))
        ys, xs = torch.meshgrid(torch.arange(G).float(), torch.arange(G).float(), indexing="ij")
        self.register_buffer("coords", torch.stack([(xs.flatten() + 0.5) / G, (ys.flatten() + 0.5) / G], 1))
        with torch.no_grad():                       # start from a whole-image prior box
            self.size_head[-1].bias.fill_(2.5)

    def forward(self, feats, expr):
        v = self.cell(feats)
        e = self.expr(expr)
        att = torch.softmax((v @ self.q(e)[:, :, None]).squeeze(-1), dim=1)
        centre = att @ self.coords                                   # soft-argmax over the grid
        ctx = (att[..., None] * v).sum(1)
        size = torch.sigmoid(self.size_head(torch.cat([ctx, e], -1)))
        return torch.cat([centre, size], -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [64, 96, 80][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    G, n_col, n_shp, n_obj, c_in, steps = 8, 4, 4, 3, 12, 250
    col_vec = torch.randn(n_col, c_in, generator=g)
    shp_vec = torch.randn(n_shp, c_in, generator=g)
    batches = []
    for _ in range(steps):
        feats = 0.3 * torch.randn(bs, G * G, c_in, generator=g)
        expr = torch.zeros(bs, 2, dtype=torch.long)
        boxes = torch.zeros(bs, 4)
        for b in range(bs):
            for o in range(n_obj):
                c = int(torch.randint(0, n_col, (1,), generator=g))
                s = int(torch.randint(0, n_shp, (1,), generator=g))
                w, h = torch.randint(1, 3, (2,), generator=g).tolist()
                x0 = int(torch.randint(0, G - w + 1, (1,), generator=g))
                y0 = int(torch.randint(0, G - h + 1, (1,), generator=g))
                for yy in range(y0, y0 + h):
                    feats[b, yy * G + x0: yy * G + x0 + w] += col_vec[c] + shp_vec[s]
                if o == 0:                                          # the referred object
                    expr[b] = torch.tensor([c, n_col + s])
                    boxes[b] = torch.tensor([(x0 + w / 2) / G, (y0 + h / 2) / G, w / G, h / G])
        batches.append(((feats, expr), boxes))
    torch.manual_seed(seed)
    model = Grounder(c_in, n_col + n_shp, d, G)
    def loss_fn(pred, gt):
        iou = box_iou(pred, gt)
        iou_term = -torch.log(iou.clamp_min(1e-6)) if fixed else -torch.log(iou)
        return 5.0 * F.l1_loss(pred, gt) + iou_term.mean()

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
