"""Small pre-RMSNorm byte-level decoder (multi-query attention with rotary embeddings, GeGLU
feed-forward, two layers, tied input/output embeddings) trained with Nesterov SGD. The learning
rate (1.0) and momentum were copied from the classic Zaremba-style LSTM language-model recipe,
where gradients are clipped at 0.25 and the model has no softmax attention; here there is no
clipping. The first updates are many times larger than the weights themselves (update/weight ratio
~1 instead of ~1e-3): the tied embedding/output matrix and the attention projections overshoot,
logits grow without bound, the loss climbs instead of falling and the run ends in inf/NaN. Fixed:
the same run with lr = 0.1."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SGD lr=1/20 LSTM-LM recipes (Zaremba et al. 2014, PyTorch word_language_model example "
          "lr=20 with clip 0.25) reused for a transformer without clipping; 'loss goes to nan "
          "with SGD on transformer LM' forum threads")

V, D, T, NH, L = 48, 32, 32, 4, 2
HD = D // NH


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, base=10000.0):
    pos = torch.arange(x.shape[-2], dtype=torch.float32)
    inv = base ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float32) / x.shape[-1])
    ang = pos[:, None] * inv[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class MultiQueryAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D, bias=False)
        self.kv_proj = nn.Linear(D, 2 * HD, bias=False)   # one shared key/value head
        self.o_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        B, S, _ = x.shape
        q = rope(self.q_proj(x).view(B, S, NH, HD).transpose(1, 2))
        k, v = self.kv_proj(x).view(B, S, 2, 1, HD).permute(2, 0, 3, 1, 4)
        k = rope(k)
        y = F.scaled_dot_product_attention(q, k.expand(B, NH, S, HD), v.expand(B, NH, S, HD), is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(B, S, D))


class GeGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.wi = nn.Linear(D, 2 * hidden, bias=False)
        self.wo = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        a, b = self.wi(x).chunk(2, -1)
        return self.wo(F.gelu(a) * b)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(D), MultiQueryAttention()
        self.mlp_norm, self.mlp = RMSNorm(D), GeGLU()

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class ByteDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        nn.init.normal_(self.tok.weight, std=0.02 * math.sqrt(D))
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.norm = RMSNorm(D)

    def forward(self, ids):
        x = self.tok(ids)
        for b in self.blocks:
            x = b(x)
        return self.norm(x) @ self.tok.weight.t()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ByteDecoder()
    steps, B = 100, 16
    # a noisy order-1 byte source with a few very frequent bytes
    trans = torch.softmax(3.0 * torch.randn(V, V, generator=g), -1)

    def batch():
        ids = torch.zeros(B, T + 1, dtype=torch.long)
        ids[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(T):
            ids[:, t + 1] = torch.multinomial(trans[ids[:, t]], 1, generator=g).squeeze(-1)
        return ids[:, :-1], ids[:, 1:]

    batches = [batch() for _ in range(steps)]

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    opt = torch.optim.SGD(model.parameters(), lr=0.1 if fixed else 1.0, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
