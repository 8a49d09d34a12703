"""MCAN-style VQA (Yu et al. 2019, Deep Modular Co-Attention Networks) on bottom-up region features.

Question: word embedding + LSTM + self-attention.  Image: per-region appearance features plus the
usual 5-d spatial feature of each detected box (x1/W, y1/H, x2/W, y2/H, area/(W*H)), embedded and
passed through self-attention and question-guided attention.  Both streams are reduced by
attentional flattening, summed, layer-normed and classified over the answer vocabulary with
cross-entropy.  The questions ask where the objects of the scene are ("on the left or the right?",
"at the top or the bottom?"), so the box features carry the answer.

Mechanism: the spatial features are computed in the data pipeline from the detector's pixel boxes
and the image size read from the image-info table.  For a handful of images in one shard the
table has ``width = height = 0`` (a failed EXIF read stored as 0), so x/W becomes inf and 0/0
becomes NaN for those rows.  Everything is calm until that batch arrives: the non-finite box
features go through the box embedding, poison the attention and the loss is NaN; the NaN gradients
then destroy the weights.

ORIGIN: ``box_proj`` -- the linear embedding of the spatial box features is the first module whose
output is non-finite (the corrupt values enter the model there).

Fix: drop the rows whose image size is 0 when building the batch (``fixed=True``).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "box_proj"
SOURCE = ("MCAN / bottom-up-attention VQA pipelines computing box spatial features as "
          "coords / image width-height from an image-info table; corrupt zero-size entries "
          "giving inf/NaN spatial features")


class AttFlat(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))
        self.out = nn.Linear(d, d)

    def forward(self, x):
        w = torch.softmax(self.mlp(x), dim=1)
        return self.out((w * x).sum(1))


class SGA(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.sa = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ga = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.n1, self.n2, self.n3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x, y):
        x = self.n1(x + self.sa(x, x, x, need_weights=False)[0])
        x = self.n2(x + self.ga(x, y, y, need_weights=False)[0])
        return self.n3(x + self.ffn(x))


class MCAN(nn.Module):
    def __init__(self, vocab, feat_dim, d, heads, n_layers, n_ans):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.q_sa = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
        self.feat_proj = nn.Linear(feat_dim, d)
        self.box_proj = nn.Linear(5, d)
        self.layers = nn.ModuleList([SGA(d, heads) for _ in range(n_layers)])
        self.q_flat, self.v_flat = AttFlat(d), AttFlat(d)
        self.norm = nn.LayerNorm(d)
        self.cls = nn.Linear(d, n_ans)

    def forward(self, q_ids, feats, boxes):
        q = self.q_sa(self.lstm(self.word(q_ids))[0])
        v = self.feat_proj(feats) + self.box_proj(boxes)
        for layer in self.layers:
            v = layer(v, q)
        return self.cls(self.norm(self.q_flat(q) + self.v_flat(v)))


def spatial_features(boxes_px, width, height):
    w, h = width[:, None], height[:, None]
    x1, y1, x2, y2 = boxes_px.unbind(-1)
    return torch.stack([x1 / w, y1 / h, x2 / w, y2 / h, (x2 - x1) * (y2 - y1) / (w * h)], dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, layers=2, lr=1e-3, bs=32, steps=110, bad=64),
           dict(d=48, layers=1, lr=7e-4, bs=24, steps=100, bad=41),
           dict(d=32, layers=3, lr=1.5e-3, bs=40, steps=120, bad=87)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5500 + seed)
    n_col, n_reg, feat_dim, vocab, q_len = 6, 8, 24, 20, 5
    col_tpl = torch.randn(n_col, feat_dim, generator=g)

    model = MCAN(vocab, feat_dim, cfg["d"], 4, cfg["layers"], 4)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = nn.CrossEntropyLoss()

    batches = []
    bs = cfg["bs"]
    for step in range(cfg["steps"]):
        width = torch.randint(320, 641, (bs,), generator=g).float()
        height = torch.randint(240, 481, (bs,), generator=g).float()
        cols = torch.randint(0, n_col, (bs, n_reg), generator=g)
        side = torch.rand(bs, 2, generator=g) < 0.5                 # where the scene's objects cluster
        cx = (side[:, :1].float() * 0.4 + 0.6 * torch.rand(bs, n_reg, generator=g))
        cy = (side[:, 1:].float() * 0.4 + 0.6 * torch.rand(bs, n_reg, generator=g))
        size = 0.05 + 0.25 * torch.rand(bs, n_reg, generator=g)
        x1 = (cx - size / 2).clamp(0, 1) * width[:, None]
        x2 = (cx + size / 2).clamp(0, 1) * width[:, None]
        y1 = (cy - size / 2).clamp(0, 1) * height[:, None]
        y2 = (cy + size / 2).clamp(0, 1) * height[:, None]
        boxes_px = torch.stack([x1, y1, x2, y2], -1)
        feats = col_tpl[cols] + 0.3 * torch.randn(bs, n_reg, feat_dim, generator=g)
        qtype = torch.randint(0, 2, (bs,), generator=g)            # 0: left/right?  1: top/bottom?
        q_ids = torch.randint(2, vocab, (bs, q_len), generator=g)
        q_ids[:, 0] = qtype
        ans = torch.where(qtype == 0, side[:, 0].long(), 2 + side[:, 1].long())
        if step == cfg["bad"]:
            bad = torch.rand(bs, generator=g) < 0.15
            bad[1] = True
            width = torch.where(bad, torch.zeros_like(width), width)     # failed EXIF read -> 0
            height = torch.where(bad, torch.zeros_like(height), height)
            if fixed:
                keep = width > 0
                q_ids, feats, boxes_px, width, height, ans = (q_ids[keep], feats[keep], boxes_px[keep],
                                                             width[keep], height[keep], ans[keep])
        boxes = spatial_features(boxes_px, width, height)
        batches.append(((q_ids, feats, boxes), ans))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
