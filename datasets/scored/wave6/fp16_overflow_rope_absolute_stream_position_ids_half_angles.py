"""RoPE angles computed under fp16 autocast from absolute stream positions > 65504.

A decoder-only LM is trained on consecutive 32-token windows read from one long token stream
and, to keep positions consistent with streaming inference, the rotary embedding gets the
absolute stream position of every token (position_ids = offset + arange).  The angle table
is computed as  position_ids @ inv_freq  inside the model, i.e. under
torch.autocast("cpu", float16): the matmul casts the positions to half.  Early windows
are fine (positions < 65504 only lose precision), but once the reader passes position
65504 (step ~86) the positions become +inf in fp16, the angles are inf, cos/sin(inf) are
NaN, q/k are NaN and the loss is NaN.  The GradScaler cannot help: the overflow is in the
forward pass, not in the gradients.
Fix: compute the rotary angles in fp32 with autocast disabled (what HF's LlamaRotaryEmbedding
does); precision, scaler and everything else unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "rotary"
SOURCE = ("HF transformers LlamaRotaryEmbedding forces float32 with autocast disabled for the "
          "position_ids @ inv_freq product (issues on RoPE precision/overflow under autocast with "
          "large position ids)")

V, T, D, H = 24, 32, 32, 4


class Rotary(nn.Module):
    def __init__(self, dh, fixed):
        super().__init__()
        self.fixed = fixed
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dh, 2).float() / dh)))

    def forward(self, position_ids):
        pos = position_ids.float()[:, :, None]                 # (B, L, 1)
        inv = self.inv_freq[None, None, :]                     # (1, 1, dh/2)
        if self.fixed:
            with torch.autocast("cpu", enabled=False):
                ang = torch.matmul(pos.float(), inv.float())
        else:
            ang = torch.matmul(pos, inv)                       # runs in fp16 under autocast
        return ang.cos(), ang.sin()


def apply_rope(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    cos, sin = cos[:, None].to(x.dtype), sin[:, None].to(x.dtype)
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.ffn = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x, cos, sin, mask):
        B, L, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, L, 3, H, D // H).permute(2, 0, 3, 1, 4)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
        att = att.masked_fill(mask, float("-inf")).float().softmax(-1).to(v.dtype)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(B, L, D))
        return x + self.ffn(self.n2(x))


class StreamLM(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.rotary = Rotary(D // H, fixed)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.norm = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, V)
        self.register_buffer("mask", torch.triu(torch.ones(T, T), 1).bool())

    def forward(self, ids, position_ids):
        cos, sin = self.rotary(position_ids)
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x, cos, sin, self.mask)
        return self.lm_head(self.norm(x))


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = StreamLM(fixed)
    steps, bs, stride = 120, 12, 768
    batches = []
    for s in range(steps):
        # stream with a lag-3 copy structure: token t repeats token t-3 with prob 0.7
        seq = torch.randint(0, V, (bs, T + 1), generator=g)
        rep = torch.rand(bs, T + 1, generator=g) < 0.7
        for t in range(3, T + 1):
            seq[:, t] = torch.where(rep[:, t], seq[:, t - 3], seq[:, t])
        offset = s * stride + torch.arange(bs)[:, None] * 8    # reader position in the stream
        pos = offset + torch.arange(T)[None]
        batches.append(((seq[:, :-1], pos), seq[:, 1:]))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.float().reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
