"""Healthy: a tiny ViT (patch embedding, CLS token, pre-norm blocks with LayerScale
gamma=1e-4 on both residual branches, blocks run through torch.utils.checkpoint)
trained under float16 autocast with torch.amp.GradScaler(init_scale=2**20).

What looks alarming: the scaler starts far too high, so the first backward passes
overflow float16 (inf gradients) and GradScaler skips the optimizer step and halves
the scale - the loss is flat for the first handful of steps, no parameter moves, and
the LayerScale gammas (1e-4) make every block look nearly inert at the start. It is
fine: once the scale has backed off, steps are taken, LayerScale grows where useful
and the loss falls steadily.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("CaiT LayerScale (Touvron et al. 2021); timm ViT with grad checkpointing; "
          "PyTorch AMP docs: GradScaler skips steps with inf/NaN grads while calibrating.")


class Block(nn.Module):
    def __init__(self, d, heads, ls):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.gamma1 = nn.Parameter(ls * torch.ones(d))
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.gamma2 = nn.Parameter(ls * torch.ones(d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.gamma1 * self.attn(h, h, h, need_weights=False)[0]
        return x + self.gamma2 * self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, patch, d, depth, heads, n_cls, img=8):
        super().__init__()
        self.patch_embed = nn.Conv2d(1, d, patch, patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads, 1e-4) for _ in range(depth)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False)
        return self.head(self.norm(x[:, 0]))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(patch=4, d=16, depth=1, heads=2, bs=16, lr=3e-3, steps=40),
           dict(patch=4, d=24, depth=2, heads=2, bs=12, lr=2e-3, steps=45),
           dict(patch=8, d=16, depth=2, heads=2, bs=24, lr=4e-3, steps=35)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    n_cls = 5
    model = TinyViT(cfg["patch"], cfg["d"], cfg["depth"], cfg["heads"], n_cls)
    glyphs = (torch.rand(n_cls, 1, 8, 8, generator=g) > 0.5).float() * 2 - 1
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((glyphs[y] + 0.8 * torch.randn(cfg["bs"], 1, 8, 8, generator=g), y))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 20)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16, scaler=scaler)
