"""Tiny Swin-style windowed-attention classifier; healthy run with benign hard negatives.

Model: 2x2 patch embedding, a regular and a shifted-window block (window 4, relative position
bias, shift mask with -100), LayerNorm + mean pooling + linear head; AdamW on a synthetic
6-class shifted-prototype image task.
Benign hard negatives: a 10-step linear warmup, then cosine annealing with one SGDR warm restart
halfway (lr jumps from ~2% back to 100%, and the loss bumps up for a few steps), and
clip_grad_norm_(0.5) applied before every step (it bites during the first steps). The scheduler
and clipping are attached as optimizer step pre/post hooks so they run inside the canonical loop.
ORIGIN: None (healthy). fixed=True: identical run (nothing to fix).
"""
import math, torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "healthy"
ORIGIN = None
SOURCE = 'Swin Transformer (Liu et al. 2021) shifted-window attention; SGDR warm restarts (Loshchilov & Hutter 2017); gradient clipping'

class WindowAttention(nn.Module):
    def __init__(self, dim, heads, ws):
        super().__init__()
        self.heads, self.ws = heads, ws
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.rel_bias = nn.Parameter(torch.zeros(heads, (2 * ws - 1) ** 2))
        c = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        rel = (c[:, :, None] - c[:, None, :]).permute(1, 2, 0) + ws - 1
        self.register_buffer("rel_idx", rel[..., 0] * (2 * ws - 1) + rel[..., 1], persistent=False)
    def forward(self, x, mask=None):
        Bw, N, C = x.shape
        q, k, v = self.qkv(x).view(Bw, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        attn = attn + self.rel_bias[:, self.rel_idx]
        if mask is not None:
            nw = mask.shape[0]
            attn = attn.view(Bw // nw, nw, self.heads, N, N) + mask[None, :, None]
            attn = attn.view(Bw, self.heads, N, N)
        return self.proj((attn.softmax(-1) @ v).transpose(1, 2).reshape(Bw, N, C))

def win_part(x, ws):
    B, H, W, C = x.shape
    return x.view(B, H // ws, ws, W // ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)

def win_merge(w, ws, B, H, W):
    return w.view(B, H // ws, W // ws, ws, ws, -1).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, -1)

class SwinBlock(nn.Module):
    def __init__(self, dim, heads, ws, shift, res):
        super().__init__()
        self.ws, self.shift = ws, shift
        self.norm1 = nn.LayerNorm(dim); self.attn = WindowAttention(dim, heads, ws)
        self.norm2 = nn.LayerNorm(dim); self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        mask = None
        if shift:
            img = torch.zeros(1, res, res, 1); cnt = 0
            for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    img[:, hs, wsl] = cnt; cnt += 1
            mw = win_part(img, ws).squeeze(-1)
            mask = (mw[:, None] - mw[:, :, None]).ne(0).float() * -100.0
        self.register_buffer("mask", mask, persistent=False)
    def forward(self, x):
        B, H, W, C = x.shape
        h = self.norm1(x)
        if self.shift:
            h = torch.roll(h, (-self.shift, -self.shift), (1, 2))
        h = win_merge(self.attn(win_part(h, self.ws), self.mask), self.ws, B, H, W)
        if self.shift:
            h = torch.roll(h, (self.shift, self.shift), (1, 2))
        x = x + h
        return x + self.mlp(self.norm2(x))

class TinySwin(nn.Module):
    def __init__(self, n_cls, dim=32, res=8, ws=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 2, 2)
        self.blocks = nn.Sequential(SwinBlock(dim, 2, ws, 0, res), SwinBlock(dim, 2, ws, ws // 2, res))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_cls)
    def forward(self, x):
        x = self.patch_embed(x).permute(0, 2, 3, 1)
        x = self.blocks(x)
        return self.head(self.norm(x).mean((1, 2)))

def build(seed, fixed=False, steps=200, lr=2e-3):
    g = torch.Generator().manual_seed(seed)
    C, B = 6, 32
    protos = F.avg_pool2d(torch.randn(C, 3, 16, 16, generator=g), 3, 1, 1)
    protos = protos / protos.flatten(1).std(1).view(C, 1, 1, 1)
    batches = []
    for _ in range(steps):
        lab = torch.randint(0, C, (B,), generator=g)
        sh = torch.randint(-2, 3, (2,), generator=g).tolist()
        x = torch.roll(protos[lab], sh, (2, 3)) + 0.8 * torch.randn(B, 3, 16, 16, generator=g)
        batches.append((x, lab))
    torch.manual_seed(seed)
    model = TinySwin(C)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    # linear warmup then cosine with one warm restart (SGDR), stepped after every optimizer.step()
    warm, period = 10, steps // 2
    def lr_at(t):
        if t < warm:
            return (t + 1) / warm
        t = (t - warm) % period
        return 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * t / period))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    def clip(o, a, k):
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    def advance(o, a, k):
        sched.step()
    opt.register_step_pre_hook(clip)
    opt.register_step_post_hook(advance)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps, amp_dtype=None, scaler=None)
