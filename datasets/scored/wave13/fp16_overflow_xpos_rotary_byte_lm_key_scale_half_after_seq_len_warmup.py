"""fp16_overflow: xPos (extrapolatable rotary) byte-level decoder LM under float16 autocast,
overflowing when sequence-length warmup lengthens the context.

Mechanism: xPos (Sun et al. 2022) multiplies rotated queries by zeta_i**(n/gamma) and rotated
keys by zeta_i**(-n/gamma) (n centred on the sequence middle, zeta_i = (2i/d + 0.4)/1.4 >=
0.286); in q.k the two factors cancel to zeta**((n-m)/gamma) <= 1 for causal pairs, so the
scores are tame in fp32.  Like the HF rotary code, the cos/sin/scale tables are cast to the
activation dtype, i.e. float16 under autocast.  The run uses a short-to-long sequence-length
warmup and a small scale_base (gamma = 12, tuned for the short phase): during the short
phase (64-128 tokens) the largest factor is 0.286**(-5.3) ~ 800, fine.  When the curriculum
switches to 240-288 tokens the factor reaches 0.286**(-10..-12) = 3e5..3e6 > 65504 (query
scale at the first positions; the key scale at the last positions underflows and its
reciprocal is inf): the rotary output is inf in half, q.k^T is inf/NaN, softmax NaN, loss
NaN.  GradScaler cannot help (the overflow is in the forward pass); it just skips every
step from then on.

ORIGIN: "blocks.0.attn.xpos" (the first layer's xPos rotary module: its output is the
first value past 65504).
Fix: autocast in bfloat16 instead of float16 (same exponent range as fp32) - the only change.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "blocks.0.attn.xpos"
SOURCE = ("Sun et al. 2022 'A Length-Extrapolatable Transformer' (xPos scale zeta**(n/gamma)); "
          "lucidrains rotary-embedding-torch use_xpos / xpos_scale_base; HF rotary tables cast "
          "to the activation dtype; sequence-length warmup curricula")


def rotate_half(x):
    x1, x2 = x.chunk(2, -1)
    return torch.cat([-x2, x1], -1)


class XPosRotary(nn.Module):
    """Rotary embedding with xPos scaling; tables are cast to the activation dtype."""

    def __init__(self, head_dim, scale_base):
        super().__init__()
        self.scale_base = scale_base
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        zeta = (torch.arange(0, head_dim, 2).float() + 0.4 * head_dim) / (1.4 * head_dim)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.register_buffer("zeta", zeta, persistent=False)

    def forward(self, t, is_key):
        T = t.size(-2)
        pos = torch.arange(T, dtype=torch.float32)
        freqs = torch.outer(pos, self.inv_freq)
        freqs = torch.cat([freqs, freqs], -1)
        power = (pos - T // 2) / self.scale_base
        scale = self.zeta[None, :] ** power[:, None]
        scale = torch.cat([scale, scale], -1)
        # like HF rotary: tables cast to the activation dtype (float16 under autocast)
        cos, sin, scale = freqs.cos().to(t.dtype), freqs.sin().to(t.dtype), scale.to(t.dtype)
        if is_key:
            scale = 1.0 / scale
        return (t * cos + rotate_half(t) * sin) * scale


class XPosAttention(nn.Module):
    def __init__(self, d, heads, scale_base):
        super().__init__()
        self.h, self.hd = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.xpos = XPosRotary(self.hd, scale_base)
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.hd).permute(2, 0, 3, 1, 4)
        q = self.xpos(q, is_key=False)
        k = self.xpos(k, is_key=True)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        a = torch.softmax(s.masked_fill(mask, float("-inf")), -1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    def __init__(self, d, heads, scale_base):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = XPosAttention(d, heads, scale_base)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class ByteLM(nn.Module):
    def __init__(self, d, heads, layers, scale_base):
        super().__init__()
        self.embed = nn.Embedding(256, d)
        self.blocks = nn.ModuleList([Block(d, heads, scale_base) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, 256, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def lm_loss(logits, y):
    return F.cross_entropy(logits.float().reshape(-1, 256), y.reshape(-1))


def _text(g, n_bytes):
    # byte stream from a small "word" vocabulary (lower-case words separated by spaces)
    letters = torch.arange(97, 123)
    words = [letters[torch.randint(0, 26, (int(torch.randint(2, 7, (1,), generator=g)),), generator=g)]
             for _ in range(60)]
    zipf = 1.0 / torch.arange(1, 61).float()
    out, total = [], 0
    while total < n_bytes:
        w = words[int(torch.multinomial(zipf, 1, generator=g))]
        out += [w, torch.tensor([32])]
        total += len(w) + 1
    return torch.cat(out)[:n_bytes]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(d=32, heads=2, layers=2, bs=3, short=80, long=256, switch=26, steps=31, lr=4e-3),
           dict(d=24, heads=2, layers=2, bs=4, short=64, long=288, switch=30, steps=34, lr=5e-3),
           dict(d=32, heads=2, layers=2, bs=2, short=128, long=240, switch=22, steps=27, lr=4e-3)][seed % 3]
    model = ByteLM(cfg["d"], cfg["heads"], cfg["layers"], scale_base=12)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    stream = _text(g, 400_000)
    batches = []
    for i in range(cfg["steps"]):
        T = cfg["short"] if i < cfg["switch"] else cfg["long"]       # sequence-length warmup
        starts = torch.randint(0, len(stream) - T - 1, (cfg["bs"],), generator=g)
        chunk = torch.stack([stream[s:s + T + 1] for s in starts.tolist()])
        batches.append((chunk[:, :-1], chunk[:, 1:]))
    return dict(model=model, optimizer=opt, loss_fn=lm_loss, batches=batches, steps=cfg["steps"],
                amp_dtype=torch.bfloat16 if fixed else torch.float16,
                scaler=torch.amp.GradScaler("cpu"))
