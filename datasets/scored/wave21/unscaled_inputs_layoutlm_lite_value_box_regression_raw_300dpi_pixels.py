"""LayoutLM-style document layout model (token embedding + projected 2-D box embedding ->
TransformerEncoder) trained to regress, for every key token of a form, the bounding box of its
value field (key-value linking on FUNSD/CORD-like scans); MSE; AdamW.

Mechanism: LayoutLM normalises every box to a 0-1000 grid (and box regressors predict normalised
coordinates).  This pipeline feeds the OCR engine's raw 300-dpi pixel boxes (x up to 2480,
y up to 3508) into nn.Linear(4, d) AND regresses raw pixel targets.  The box projection is
hundreds of times larger than the token embeddings, and the targets are ~1e3, so the MSE is ~1e6
from step 0; with AdamW the output layer moves ~lr per step and the loss barely moves in the
whole run (the token identity that decides the offset is also drowned by the box term).
ORIGIN: box_proj, the first layer that receives the unscaled pixel coordinates.
Fix: divide boxes and targets by the page size (coordinates in [0, 1]), nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "box_proj"
SOURCE = ("LayoutLM (Xu et al. 2020) normalize_bbox to 0-1000; HF forum / LayoutLMv2 issues "
          "'loss huge / not decreasing when passing unnormalized bounding boxes'")


class LayoutLMLite(nn.Module):
    def __init__(self, V, d, layers):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.box_proj = nn.Linear(4, d)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, 4)

    def forward(self, ids, boxes):
        return self.head(self.enc(self.tok(ids) + self.box_proj(boxes)))


def build(seed: int, fixed: bool = False) -> dict:
    d, layers, bs, lr = [(16, 1, 8, 3e-3), (24, 2, 6, 2e-3), (16, 2, 10, 3e-3)][seed % 3]
    V, T = 20, 8
    W, H = 2480.0, 3508.0
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    model = LayoutLMLite(V, d, layers)
    offset = torch.rand(V, generator=g) * 0.3 + 0.05     # value field sits right of the key
    steps = 80
    batches = []
    scale = torch.tensor([W, H, W, H])
    for _ in range(steps):
        ids = torch.randint(0, V, (bs, T), generator=g)
        x0 = torch.rand(bs, T, generator=g) * 0.4
        y0 = torch.rand(bs, T, generator=g) * 0.9
        w = 0.05 + 0.1 * torch.rand(bs, T, generator=g)
        box = torch.stack([x0, y0, x0 + w, y0 + 0.02], -1)                    # normalised
        dx = offset[ids]
        tgt = torch.stack([x0 + w + dx, y0, x0 + w + dx + 0.2, y0 + 0.02], -1)
        if not fixed:                                                         # raw OCR pixels
            box, tgt = box * scale, tgt * scale
        batches.append(((ids, box), tgt))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)

    def loss_fn(pred, tgt):
        return F.mse_loss(pred, tgt)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
