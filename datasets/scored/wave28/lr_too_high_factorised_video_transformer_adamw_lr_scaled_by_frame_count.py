"""Factorised space-time video transformer (ViViT "factorised encoder" style): a spatial
transformer encodes the patches of each frame into a frame token, a temporal transformer mixes
the frame tokens, and a linear head classifies the clip's motion pattern.

Mechanism: the recipe's AdamW lr is 1e-3 for 8 clips, scaled linearly with the batch size.  The
training script takes the batch size for the scaling rule from the frame-flattened
(B*T, C, H, W) tensor the spatial encoder sees, so it counts frames, not clips, and the lr ends
up T times too large (7.5e-3 to 1.2e-2 here, far above what a small ViT tolerates without
warm-up).  AdamW's per-parameter steps of that size make the attention logits and the
patch embedding jump each step: the attention collapses, the token representations stop
carrying the motion, and the cross-entropy stays at or above log(n_classes) instead of falling
(it oscillates; nothing becomes non-finite).

ORIGIN: None - the oversized lr hits every parameter at once; no single module starts it.

Fix: scale by clips, not frames: lr = 1e-3 * B / 8.  Same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Arnab et al., ViViT (ICCV 2021) factorised encoder; Goyal et al. 2017 linear scaling "
          "rule applied to the frame-flattened batch (B*T) of a video model; transformers "
          "diverging / not learning without a small lr and warm-up (Liu et al. 2020, "
          "'Understanding the difficulty of training transformers')")


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class FactorisedVideoTransformer(nn.Module):
    def __init__(self, d, heads, s_depth, t_depth, t, n_patches, patch, n_cls):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch * patch, d)
        self.pos_s = nn.Parameter(torch.randn(1, n_patches + 1, d) * 0.02)
        self.cls_s = nn.Parameter(torch.zeros(1, 1, d))
        self.spatial = nn.Sequential(*[Block(d, heads) for _ in range(s_depth)])
        self.pos_t = nn.Parameter(torch.randn(1, t + 1, d) * 0.02)
        self.cls_t = nn.Parameter(torch.zeros(1, 1, d))
        self.temporal = nn.Sequential(*[Block(d, heads) for _ in range(t_depth)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_cls)

    def forward(self, clip):
        b, t, h, w = clip.shape
        p = self.patch
        x = clip.reshape(b * t, h // p, p, w // p, p).permute(0, 1, 3, 2, 4).flatten(3)
        x = self.embed(x.flatten(1, 2))
        x = torch.cat([self.cls_s.expand(b * t, -1, -1), x], 1) + self.pos_s
        f = self.spatial(x)[:, 0].view(b, t, -1)
        z = torch.cat([self.cls_t.expand(b, -1, -1), f], 1) + self.pos_t
        return self.head(self.ln(self.temporal(z)[:, 0]))


def _clips(g, n, t, size, n_cls):
    y = torch.randint(0, n_cls, (n,), generator=g)
    dirs = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    v = dirs[y] * (0.8 + 0.4 * torch.rand(n, 1, generator=g))
    p0 = size / 2 + (torch.rand(n, 2, generator=g) * 2 - 1) * 1.5
    ys, xs = torch.meshgrid(torch.arange(size, dtype=torch.float32),
                            torch.arange(size, dtype=torch.float32), indexing="ij")
    frames = []
    for i in range(t):
        p = p0 + v * (i - t / 2)
        blob = torch.exp(-((xs - p[:, 0, None, None]) ** 2 + (ys - p[:, 1, None, None]) ** 2)
                         / 3.0)
        frames.append(blob + 0.1 * torch.randn(n, size, size, generator=g))
    return torch.stack(frames, 1), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 32, 48][seed % 3]
    s_depth = [1, 1, 2][seed % 3]
    t = [8, 8, 6][seed % 3]
    batch = [8, 12, 10][seed % 3]
    size, patch, n_cls, steps = 12, 4, 4, 300
    base_lr, base_batch = 1e-3, 8
    scaled_batch = batch if fixed else batch * t          # the bug: counts frames
    lr = base_lr * scaled_batch / base_batch
    model = FactorisedVideoTransformer(d, 4, s_depth, 1, t, (size // patch) ** 2, patch, n_cls)
    batches = [_clips(g, batch, t, size, n_cls) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    return {"model": model, "optimizer": opt, "loss_fn": F.cross_entropy, "batches": batches,
            "steps": steps}
