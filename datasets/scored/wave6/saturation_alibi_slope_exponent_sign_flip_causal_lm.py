"""ALiBi decoder whose head slopes were generated with the exponent sign flipped.

ALiBi adds -m_h * (i - j) to the attention logits of head h, with the geometric slopes
m_h = 2 ** (-8 * h / H) (1/4, 1/16, ... for H = 4).  A re-implementation wrote
2 ** (8 * h / H) instead, giving slopes 4, 16, 64, 256.  The position bias then dwarfs every
content logit: each query's softmax is a hard one-hot on itself (the neighbour one step back
already gets exp(-4) of the mass, anything further is 0), so the softmax is saturated and
its Jacobian is ~0.  The query/key projections get no gradient and the network can never
learn to look back at the document-type token at position 0, which is the only thing the
per-position targets depend on.  The loss sits at log(8) for the whole run (a silent stall,
no NaN).  Fix: the correct, small slopes (smaller pre-softmax logits), nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "blocks.0.attn"
SOURCE = ("ALiBi (Press et al., 'Train Short, Test Long', 2022) slope recipe 2**(-8h/H); "
          "re-implementations that drop the minus sign in the exponent get hard-local, saturated "
          "attention (pattern discussed in ALiBi port issues, e.g. slopes for non-power-of-2 heads)")

VOCAB = 40      # 0..7 document-type tokens, 8..39 filler
N_CLS = 8
T = 16


def alibi_slopes(n_heads, fixed):
    if fixed:
        return torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])
    return torch.tensor([2.0 ** (8.0 * (h + 1) / n_heads) for h in range(n_heads)])  # sign typo


class AlibiAttention(nn.Module):
    def __init__(self, d, n_heads, slopes):
        super().__init__()
        self.h, self.dh = n_heads, d // n_heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        i = torch.arange(T)
        dist = (i[:, None] - i[None, :]).float()           # i - j >= 0 for the causal part
        bias = -slopes[:, None, None] * dist.clamp(min=0)
        bias = bias.masked_fill(dist < 0, float("-inf"))
        self.register_buffer("bias", bias)                  # (H, T, T)

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        att = q @ k.transpose(-1, -2) / math.sqrt(self.dh) + self.bias[:, :L, :L]
        att = att.softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, L, D)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d, n_heads, slopes):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = AlibiAttention(d, n_heads, slopes)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class AlibiLM(nn.Module):
    def __init__(self, fixed, d=32, n_heads=4, n_layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        slopes = alibi_slopes(n_heads, fixed)
        self.blocks = nn.ModuleList([Block(d, n_heads, slopes) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_CLS)

    def forward(self, ids):
        x = self.tok(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = AlibiLM(fixed)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        cls = torch.randint(0, N_CLS, (bs,), generator=g)
        ids = torch.randint(N_CLS, VOCAB, (bs, T), generator=g)
        ids[:, 0] = cls
        batches.append((ids, cls))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def loss_fn(logits, cls):
        # every position after the type token must report the document type
        lg = logits[:, 1:].reshape(-1, N_CLS)
        tgt = cls[:, None].expand(-1, T - 1).reshape(-1)
        return F.cross_entropy(lg, tgt)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
