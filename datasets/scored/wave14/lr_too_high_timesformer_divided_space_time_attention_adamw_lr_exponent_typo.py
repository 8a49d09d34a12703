"""TimeSformer (Bertasius et al. 2021) with divided space-time attention for action
recognition on short clips: per-frame patch embedding, a [CLS] token, learned spatial and
temporal position embeddings, and pre-LN blocks that apply temporal attention (each patch
attends to the same patch in the other frames), then spatial attention (within a frame),
then an MLP. Trained with AdamW.

Mechanism: the recipe lr (5e-4 .. 1.5e-3 across the seeds) is written into the config with
the exponent two off (``lr: 1e-1`` for ``1e-3``). With Adam-type optimisers every weight
moves by ~lr per step regardless of its gradient, so at 5e-2 .. 1.5e-1 the update/weight ratio of the 0.02-std attention
and MLP weights is O(1) from the first steps: the q/k projections blow the attention logits
up, the softmax collapses to one-hot, the LayerNorm'd residual stream is dominated by a few
huge directions and the classifier output swings between confidently wrong classes. The loss
jumps above log(C) within a few steps and then hovers around chance level for the rest of
the run, while the correct lr learns the appearance half of the label within ~40 steps.

ORIGIN: None -- the learning rate is global; every layer is driven too hard at once.

Fix: the intended lr (100x smaller; same AdamW, betas, weight decay, data).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ('TimeSformer (Bertasius, Wang & Torresani, ICML 2021) divided space-time '
          'attention; known pattern of an lr exponent typo in a YAML config (1e-1 for 1e-3) '
          'with AdamW')


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):                                  # x: (N, L, D)
        n, l, d = x.shape
        q, k, v = self.qkv(x).view(n, l, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(n, l, d)
        return self.proj(y)


class DividedBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm_t, self.attn_t = nn.LayerNorm(dim), Attention(dim, heads)
        self.temporal_fc = nn.Linear(dim, dim)
        self.norm_s, self.attn_s = nn.LayerNorm(dim), Attention(dim, heads)
        self.norm_m = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, T, P):                           # x: (B, 1 + T*P, D)
        b, _, d = x.shape
        cls, tok = x[:, :1], x[:, 1:]
        # temporal attention: sequences over T for each patch position
        t = tok.view(b, T, P, d).transpose(1, 2).reshape(b * P, T, d)
        t = self.temporal_fc(self.attn_t(self.norm_t(t)))
        tok = tok + t.view(b, P, T, d).transpose(1, 2).reshape(b, T * P, d)
        # spatial attention: sequences over P (+ cls) for each frame
        s = tok.view(b, T, P, d).reshape(b * T, P, d)
        s = torch.cat([cls.repeat_interleave(T, 0), s], 1)
        s = self.attn_s(self.norm_s(s))
        cls = cls + s[:, :1].view(b, T, d).mean(1, keepdim=True)
        tok = tok + s[:, 1:].reshape(b, T * P, d)
        x = torch.cat([cls, tok], 1)
        return x + self.mlp(self.norm_m(x))


class TimeSformer(nn.Module):
    def __init__(self, frames, size, patch, dim, depth, heads, n_classes):
        super().__init__()
        self.T, self.P = frames, (size // patch) ** 2
        self.patch_embed = nn.Conv2d(1, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.P + 1, dim))
        self.time_embed = nn.Parameter(torch.zeros(1, frames, dim))
        self.blocks = nn.ModuleList([DividedBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, video):                              # (B, T, 1, H, W)
        b, T = video.shape[:2]
        x = self.patch_embed(video.flatten(0, 1)).flatten(2).transpose(1, 2)   # (B*T, P, D)
        x = x + self.pos_embed[:, 1:]
        x = (x.view(b, T, self.P, -1) + self.time_embed.unsqueeze(2)).reshape(b, T * self.P, -1)
        cls = self.cls_token.expand(b, -1, -1) + self.pos_embed[:, :1]
        x = torch.cat([cls, x], 1)
        for blk in self.blocks:
            x = blk(x, self.T, self.P)
        return self.head(self.norm(x)[:, 0])


def make_batch(g, bs, T, size, n_classes):
    """Synthetic actions: a blob moving in one of 4 directions, at one of n_classes//4
    speeds/shapes; class = (direction, shape)."""
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    video = 0.05 * torch.randn(bs, T, 1, size, size, generator=g)
    labels = torch.randint(0, n_classes, (bs,), generator=g)
    dirs = torch.tensor([[0, 1], [0, -1], [1, 0], [-1, 0]], dtype=torch.float)
    for i in range(bs):
        direction, shape = int(labels[i]) % 4, int(labels[i]) // 4
        y0, x0 = size / 2 + 3 * (torch.rand(2, generator=g) - 0.5)
        for t in range(T):
            cy = y0 + dirs[direction, 0] * 2.0 * (t - T / 2)
            cx = x0 + dirs[direction, 1] * 2.0 * (t - T / 2)
            if shape == 0:                                 # large bright disc
                blob = 1.5 * torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 6.0)
            else:                                          # small dim square
                blob = 0.6 * (((yy - cy).abs() < 1.5) & ((xx - cx).abs() < 1.5)).float()
            video[i, t, 0] += blob
    return video, labels


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(dim=32, depth=2, heads=4, lr=1e-3, bs=16, steps=100),
        dict(dim=48, depth=3, heads=4, lr=5e-4, bs=12, steps=100),
        dict(dim=32, depth=3, heads=2, lr=1.5e-3, bs=16, steps=90),
    ][seed % 3]
    torch.manual_seed(seed)
    n_classes, T, size = 8, 4, 16
    model = TimeSformer(T, size, 4, cfg["dim"], cfg["depth"], cfg["heads"], n_classes)
    lr = cfg["lr"] if fixed else cfg["lr"] * 100          # "1e-1" typed for "1e-3"
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    g = torch.Generator().manual_seed(620 + seed)
    batches = [make_batch(g, cfg["bs"], T, size, n_classes) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
