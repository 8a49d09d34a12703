"""Tiny DETR-style detector: a conv backbone, a set of 4 learned object queries that cross-attend
to the flattened feature map, and per-query class (incl. 'no object') and box heads returning a
dict. The loss is the DETR set loss: an optimal one-to-one matching between queries and ground
truth boxes (solved here by brute force over permutations, which is exact for 4 queries) with a
class cost + L1 box cost, then CE (down-weighted no-object class) + L1 on matched boxes. Because
the assignment is re-solved every step, the loss is non-smooth: it jumps when a query swaps the
object it is matched to, and the number of objects per image (1-3) changes the loss level from
batch to batch. These jumps are normal for bipartite-matching losses; training is healthy and the
loss keeps going down."""
import itertools
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Carion et al. 2020 DETR (Hungarian matching set loss, eos_coef=0.1); the well-known "
          "'DETR loss is noisy / jumps' discussions in facebookresearch/detr issues")

N_Q, N_CLS = 4, 3


class TinyDETR(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, d, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(d, d, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.pos = nn.Parameter(torch.randn(1, 64, d) * 0.1)
        self.queries = nn.Parameter(torch.randn(N_Q, d) * 0.1)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, d))
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.cls_head = nn.Linear(d, N_CLS + 1)
        self.box_head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, img):
        f = self.backbone(img).flatten(2).transpose(1, 2) + self.pos       # (B, 64, d)
        q = self.queries.unsqueeze(0).expand(img.shape[0], -1, -1)
        h = self.norm1(q + self.attn(q, f, f)[0])
        h = self.norm2(h + self.ffn(h))
        return {"logits": self.cls_head(h), "boxes": torch.sigmoid(self.box_head(h))}


def _match(logits, boxes, tcls, tbox):
    prob = logits.softmax(-1)
    best, best_perm = None, None
    n = len(tcls)
    for perm in itertools.permutations(range(N_Q), n):
        idx = torch.tensor(perm)
        c = -prob[idx, tcls].sum() + 5 * (boxes[idx] - tbox).abs().sum()
        if best is None or c < best:
            best, best_perm = c, idx
    return best_perm


def set_loss(out, targets):
    tcls_all, tbox_all, nobj = targets
    B = out["logits"].shape[0]
    total = 0.0
    weight = torch.ones(N_CLS + 1); weight[-1] = 0.1
    for b in range(B):
        n = int(nobj[b])
        tcls, tbox = tcls_all[b, :n], tbox_all[b, :n]
        with torch.no_grad():
            idx = _match(out["logits"][b], out["boxes"][b], tcls, tbox)
        target_cls = torch.full((N_Q,), N_CLS, dtype=torch.long)
        target_cls[idx] = tcls
        ce = F.cross_entropy(out["logits"][b], target_cls, weight=weight)
        l1 = (out["boxes"][b, idx] - tbox).abs().sum() / n
        total = total + ce + 5 * l1
    return total / B


def _batch(g, n, H=32):
    imgs = 0.1 * torch.randn(n, 3, H, H, generator=g)
    tcls = torch.zeros(n, 3, dtype=torch.long)
    tbox = torch.zeros(n, 3, 4)
    nobj = torch.randint(1, 4, (n,), generator=g)
    colors = torch.tensor([[1., 0., 0.], [0., 1., 0.], [0., 0., 1.]])
    for b in range(n):
        for k in range(int(nobj[b])):
            c = int(torch.randint(0, N_CLS, (1,), generator=g))
            w, h = (0.2 + 0.2 * torch.rand(2, generator=g)).tolist()
            cx, cy = (w / 2 + (1 - w) * float(torch.rand(1, generator=g)), h / 2 + (1 - h) * float(torch.rand(1, generator=g)))
            x0, x1 = int((cx - w / 2) * H), int((cx + w / 2) * H)
            y0, y1 = int((cy - h / 2) * H), int((cy + h / 2) * H)
            imgs[b, :, y0:y1, x0:x1] = colors[c].view(3, 1, 1)
            tcls[b, k] = c
            tbox[b, k] = torch.tensor([cx, cy, w, h])
    return imgs, (tcls, tbox, nobj)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyDETR()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    pool = [_batch(g, 8) for _ in range(20)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=set_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
