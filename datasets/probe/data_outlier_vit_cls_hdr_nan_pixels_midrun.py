"""ViT classifier with a learned class token (conv patch embedding, pre-LN LayerNorm blocks,
head on the [CLS] token). The images are float HDR/EXR-style tiles; one shard read
mid-run contains tiles whose invalid pixels are stored as NaN (sensor dropouts / failed decode), so a
single batch carries NaN pixels, the forward pass turns NaN and AdamW writes NaN into every weight.
fixed=True: the same batches, with the corrupt tiles filtered out of that batch (isfinite check).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("NaN pixels in float image data (EXR/HDR tiles, satellite no-data, depth dropouts) reaching a "
          "ViT mid-epoch; common 'loss becomes NaN after N iterations' reports fixed by filtering "
          "non-finite samples (torch.isfinite) in the dataset/collate")

D, HEADS, NCLS, IMG, P = 48, 4, 6, 16, 4
NTOK = (IMG // P) ** 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, HEADS, batch_first=True)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, D, P, stride=P)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, D))
        self.pos_embed = nn.Parameter(torch.randn(1, NTOK + 1, D) * 0.02)
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, NCLS)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


def make_batches(seed, steps, fixed, B=32):
    g = torch.Generator().manual_seed(seed)
    templates = F.avg_pool2d(torch.rand(NCLS, 3, IMG, IMG, generator=g), 5, stride=1, padding=2)
    templates = (templates - templates.mean()) / templates.std()
    bad_step = int(steps * (0.4 + 0.2 * torch.rand(1, generator=g).item()))
    batches = []
    for s in range(steps):
        y = torch.randint(0, NCLS, (B,), generator=g)
        x = templates[y] + 0.7 * torch.randn(B, 3, IMG, IMG, generator=g)
        if s == bad_step:
            # a corrupt shard: 3 tiles with a block of no-data pixels stored as NaN
            for i in range(3):
                r, c = torch.randint(0, IMG - 4, (2,), generator=g).tolist()
                x[i, :, r:r + 4, c:c + 4] = float("nan")
            if fixed:
                ok = torch.isfinite(x).flatten(1).all(dim=1)
                x, y = x[ok], y[ok]
        batches.append((x, y))
    return batches


def loss_fn(out, y):
    return F.cross_entropy(out, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = ViT()
    steps = 100
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=make_batches(seed, steps, fixed),
                steps=steps, amp_dtype=None, scaler=None)
