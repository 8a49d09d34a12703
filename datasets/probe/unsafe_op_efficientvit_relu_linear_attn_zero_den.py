"""EfficientViT-style classifier (4x4 patch embedding, 2 pre-LN blocks) whose token mixer is ReLU
linear attention: out = relu(q) @ (relu(k)^T v) / (relu(q) @ sum_t relu(k_t)), written without the
epsilon in the denominator. Early training is calm; as the second block's ReLU keys sparsify, an
image arrives for which every key (or every key dim the query uses) is zero, the normaliser is
exactly 0 and the block emits 0/0 = NaN, which reaches the loss and then every weight.
fixed=True adds eps=1e-6 to the denominator (as EfficientViT's LiteMLA does); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "blocks.1.attn"
SOURCE = ("EfficientViT (Cai et al. 2023, mit-han-lab/efficientvit LiteMLA: ReLU linear attention, "
          "out[..., :-1] / (out[..., -1:] + eps)); 'Transformers are RNNs' linear attention "
          "(Katharopoulos et al. 2020) normaliser; user ports that drop the eps get 0/0 NaNs")

IMG, PATCH, D, HEAD_DIM = 16, 4, 64, 32
N_HEADS = D // HEAD_DIM


class ReLULinearAttention(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.eps = eps

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, N_HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        q, k = torch.relu(q), torch.relu(k)
        kv = k.transpose(-1, -2) @ v                                   # (B, H, Dh, Dh)
        num = q @ kv                                                    # (B, H, T, Dh)
        den = q @ k.sum(-2, keepdim=True).transpose(-1, -2)            # (B, H, T, 1)
        out = num / (den + self.eps) if self.eps else num / den
        return self.proj(out.transpose(1, 2).reshape(b, t, D))


class Block(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.attn = ReLULinearAttention(eps)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class LinearAttnViT(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.patch = nn.Conv2d(1, D, PATCH, stride=PATCH)
        self.pos = nn.Parameter(torch.randn(1, (IMG // PATCH) ** 2, D) * 0.02)
        self.blocks = nn.ModuleList([Block(eps) for _ in range(2)])
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        h = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.norm(h).mean(1))


def _shapes(g, bs):
    """disk / square / horizontal bar / vertical bar at random place and size, plus sensor noise."""
    yy, xx = torch.meshgrid(torch.arange(IMG).float(), torch.arange(IMG).float(), indexing="ij")
    cls = torch.randint(0, 4, (bs,), generator=g)
    cx = 4 + 8 * torch.rand(bs, generator=g)
    cy = 4 + 8 * torch.rand(bs, generator=g)
    r = (2 + 2 * torch.rand(bs, generator=g))[:, None, None]
    dx, dy = xx[None] - cx[:, None, None], yy[None] - cy[:, None, None]
    disk = (dx ** 2 + dy ** 2 < r ** 2).float()
    square = ((dx.abs() < r) & (dy.abs() < r)).float()
    hbar = ((dx.abs() < 1.5 * r) & (dy.abs() < 1)).float()
    vbar = ((dy.abs() < 1.5 * r) & (dx.abs() < 1)).float()
    img = torch.stack([disk, square, hbar, vbar], 1)[torch.arange(bs), cls]
    return (img + 0.3 * torch.randn(bs, IMG, IMG, generator=g))[:, None], cls


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 150, 32
    batches = [_shapes(g, bs) for _ in range(steps)]
    model = LinearAttnViT(eps=1e-6 if fixed else None)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
