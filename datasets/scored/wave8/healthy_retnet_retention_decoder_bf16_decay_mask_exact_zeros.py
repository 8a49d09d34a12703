"""A small RetNet-style decoder (Sun et al. 2023) trained as a causal language model on a
synthetic Markov "language" under bfloat16 autocast (no GradScaler, which bf16 does not need).
Retention replaces softmax attention by (Q K^T * D) V with a causal decay matrix
D[n, m] = gamma_h^(n-m) for m <= n and exactly 0 above the diagonal, and a different gamma per
head (0.5 .. 0.97); the retention scores are unnormalised (no softmax), outputs are GroupNorm-ed
per head. Things that look alarming but are normal here: half of every score matrix and the
corresponding gradients are exactly zero, the fast-decay heads have weights underflowing to ~0
after a few positions, activations and losses carry bf16 rounding noise, and the retention
outputs have no softmax bound. The model trains smoothly; the loss ends well below its start."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("RetNet (Sun et al. 2023, 'Retentive Network: A Successor to Transformer'), parallel "
          "retention form with multi-scale decay and per-head GroupNorm; bf16 autocast training.")

V, D, HEADS, T = 48, 48, 4, 32


class MultiScaleRetention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D, bias=False)
        self.k = nn.Linear(D, D, bias=False)
        self.v = nn.Linear(D, D, bias=False)
        self.g = nn.Linear(D, D, bias=False)
        self.o = nn.Linear(D, D, bias=False)
        self.norm = nn.GroupNorm(HEADS, D)
        gammas = 1 - torch.exp(torch.linspace(math.log(1 / 2), math.log(1 / 32), HEADS))
        n = torch.arange(T, dtype=torch.float32)
        diff = n[:, None] - n[None, :]
        decay = gammas[:, None, None] ** diff.clamp_min(0)
        self.register_buffer("decay", decay * (diff >= 0).float())  # exact zeros above diagonal

    def forward(self, x):
        b, t, _ = x.shape
        hd = D // HEADS
        q = self.q(x).view(b, t, HEADS, hd).transpose(1, 2)
        k = self.k(x).view(b, t, HEADS, hd).transpose(1, 2) / math.sqrt(hd)
        v = self.v(x).view(b, t, HEADS, hd).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) * self.decay[:, :t, :t]
        y = (scores @ v).transpose(1, 2).reshape(b * t, D)
        y = self.norm(y.float()).view(b, t, D)
        return self.o(F.silu(self.g(x)) * y)


class RetNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.retention = MultiScaleRetention()
        self.ln2 = nn.LayerNorm(D)
        self.ffn = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        x = x + self.retention(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class RetNetLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.blocks = nn.ModuleList([RetNetBlock() for _ in range(2)])
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, V)

    def forward(self, tokens):
        h = self.embed(tokens)
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.ln_f(h))


def markov_batch(g, succ, w, B):
    x = torch.empty(B, T + 1, dtype=torch.long)
    x[:, 0] = torch.randint(0, V, (B,), generator=g)
    for t in range(T):
        j = torch.multinomial(w[x[:, t]], 1, generator=g).squeeze(1)
        x[:, t + 1] = succ[x[:, t], j]
    return x[:, :-1], x[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    succ = torch.stack([torch.randperm(V, generator=g)[:4] for _ in range(V)])
    w = torch.rand(V, 4, generator=g) + 0.3
    w = w / w.sum(1, keepdim=True)
    model = RetNetLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
    steps = 120
    batches = [markov_batch(g, succ, w, 16) for _ in range(steps)]

    def loss_fn(out, y):
        return F.cross_entropy(out.float().reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16, scaler=None)
