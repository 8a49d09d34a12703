"""Tiny vision transformer (4x4 patch embedding, learned positional embeddings, 2 pre-norm
encoder layers, mean-pooled tokens) trained with AdamW on the self-supervised rotation-
prediction pretext task, using progressive resizing (FixRes / EfficientNetV2-style): the first
60% of the steps see 16x16 images (16 tokens), then the pipeline switches to 24x24 images (36
tokens) and the model bicubically interpolates its 4x4 positional-embedding grid to 6x6 on the
fly, as timm does for resolution changes. The pretext images carry a fixed-pixel-size corner
mark, so at the switch the mark covers fewer tokens and the positions are interpolated: the loss
jumps right after the switch (by 2x to 40x depending on the seed), stays noisy for ~20 steps
and then returns to its previous level. The spike is expected behaviour of a resolution change, not
divergence."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("timm resample_abs_pos_embed (bicubic pos-embed interpolation); FixRes (Touvron et al. "
          "2019) and EfficientNetV2 progressive learning; RotNet pretext task")


class TinyViT(nn.Module):
    def __init__(self, patch=4, base_grid=4, dim=48, depth=2, heads=4, n_cls=4):
        super().__init__()
        self.patch = patch
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.pos_embed = nn.Parameter(torch.randn(1, dim, base_grid, base_grid) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        t = self.patch_embed(x)                                   # B, D, h, w
        pos = self.pos_embed
        if pos.shape[-2:] != t.shape[-2:]:
            pos = F.interpolate(pos, size=t.shape[-2:], mode="bicubic", align_corners=False)
        t = (t + pos).flatten(2).transpose(1, 2)
        t = self.encoder(t)
        return self.head(self.norm(t).mean(1))


def _batch(g, hw, n=32):
    # an "L"-shaped mark of fixed pixel size near one corner; its orientation gives the rotation
    imgs = 0.1 * torch.randn(n, 3, hw, hw, generator=g)
    for i in range(n):
        r, c = torch.randint(1, 4, (2,), generator=g).tolist()
        col = 0.5 + torch.rand(3, 1, generator=g)
        imgs[i, :, r, c:c + 6] += col
        imgs[i, :, r:r + 4, c] += col
    k = torch.randint(0, 4, (n,), generator=g)
    return torch.stack([torch.rot90(imgs[i], int(k[i]), dims=(1, 2)) for i in range(n)]), k


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyViT()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
    steps = 150
    switch = int(0.6 * steps)
    batches = [_batch(g, 16 if s < switch else 24) for s in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
