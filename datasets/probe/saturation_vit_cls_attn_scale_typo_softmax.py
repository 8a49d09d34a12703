"""Tiny ViT (class token, learned position embeddings, pre-norm blocks) whose
hand-written attention uses `self.scale = head_dim ** 0.5` instead of `** -0.5`.
The q.k logits are multiplied by sqrt(d) instead of divided by it, so every
attention softmax starts saturated (near one-hot, gradient ~0): the class token
cannot learn to pool the patch evidence and the loss stalls near chance.
fixed=True: the scale is head_dim ** -0.5 (pre-activations of the softmax shrink).
"""

import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "blocks.0.attn"
SOURCE = (
    "Vaswani et al. 2017 sec. 3.2.1 (unscaled dot products push softmax into regions with "
    "extremely small gradients); timm's Attention uses scale = head_dim ** -0.5, here mistyped as "
    "** 0.5; related to attention entropy collapse (Zhai et al. 2023)"
)


class Attention(nn.Module):
    def __init__(self, dim, heads, fixed):
        super().__init__()
        self.heads = heads
        hd = dim // heads
        self.scale = hd**-0.5 if fixed else hd**0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, heads, fixed):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, fixed)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, fixed, img=24, patch=4, dim=48, depth=2, heads=1, classes=4):
        super().__init__()
        n = (img // patch) ** 2
        self.patch_embed = nn.Conv2d(1, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, fixed) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x[:, 0]))


def _make_batch(g, bs, img=24, patch=4, p_true=0.36, noise=0.3):
    # 4 classes = 4 stripe orientations; each 4x4 patch shows the class orientation with
    # prob p_true, otherwise a random distractor. One patch says little; the majority over
    # the 36 patches decides.
    n_side = img // patch
    n = n_side * n_side
    y = torch.randint(0, 4, (bs,), generator=g)
    other = (y[:, None] + torch.randint(1, 4, (bs, n), generator=g)) % 4
    ori = torch.where(torch.rand(bs, n, generator=g) < p_true, y[:, None].expand(bs, n), other)
    r = torch.arange(patch).float()[:, None]
    c = torch.arange(patch).float()[None, :]
    phase = torch.randint(0, 4, (bs, n, 1, 1), generator=g).float() * 1.5708
    arg = torch.stack([r + 0 * c, c + 0 * r, r + c, r - c])  # 4 x patch x patch
    p = torch.cos(1.5708 * arg[ori] + phase) + noise * torch.randn(bs, n, patch, patch, generator=g)
    x = p.reshape(bs, n_side, n_side, patch, patch).permute(0, 1, 3, 2, 4).reshape(bs, 1, img, img)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = ViT(fixed)
    steps = 200
    batches = [_make_batch(g, 32) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
    torch.manual_seed(seed)
    return dict(
        model=model,
        optimizer=opt,
        loss_fn=nn.CrossEntropyLoss(),
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
