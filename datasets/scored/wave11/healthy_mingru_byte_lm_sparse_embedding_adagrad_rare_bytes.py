"""Healthy run: a byte-level language model whose token mixer is a stack of two minGRU layers (sigmoid
update gate, linear recurrence, pre-RMSNorm, residual) with a SwiGLU channel mixer, trained with
Adagrad. The byte embedding is ``nn.Embedding(sparse=True)``: its gradient is a sparse tensor that
touches only the rows of bytes present in the batch, and a block of rare "escape" bytes shows up in
only ~1 batch in 6, so those rows get gradient intermittently and sit untouched for many steps.
Adagrad's first updates are large (lr / sqrt(g^2) ~ lr per coordinate) so the loss wiggles for a
few steps. Sparse, intermittent gradients and uneven per-row update counts look suspicious, but
this is how sparse embeddings behave and the loss falls steadily."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("minGRU (Feng et al. 2024 'Were RNNs All We Needed?'); sparse embedding gradients with "
          "Adagrad (PyTorch nn.Embedding(sparse=True) docs: supported by SGD, SparseAdam, Adagrad)")

V, D, T = 40, 32, 32
RARE = list(range(32, 40))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MinGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_zh = nn.Linear(D, 2 * D)
        self.out = nn.Linear(D, D, bias=False)

    def forward(self, x):
        zl, hh = self.to_zh(x).chunk(2, -1)
        z = torch.sigmoid(zl)
        h = torch.zeros_like(x[:, 0])
        hs = []
        for t in range(x.shape[1]):
            h = (1 - z[:, t]) * h + z[:, t] * hh[:, t]
            hs.append(h)
        return self.out(torch.stack(hs, 1))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.rnn = RMSNorm(D), MinGRU()
        self.norm2, self.ffn = RMSNorm(D), SwiGLU()

    def forward(self, x):
        x = x + self.rnn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class MinGRULM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D, sparse=True)
        self.layers = nn.ModuleList(Layer() for _ in range(2))
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, V)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MinGRULM()
    steps, B = 120, 16
    common = 32
    trans = torch.softmax(2.5 * torch.randn(common, common, generator=g), -1)

    def batch(i):
        ids = torch.zeros(B, T + 1, dtype=torch.long)
        ids[:, 0] = torch.randint(0, common, (B,), generator=g)
        for t in range(T):
            ids[:, t + 1] = torch.multinomial(trans[ids[:, t]], 1, generator=g).squeeze(-1)
        if i % 6 == 5:  # an "escape sequence" batch: rare bytes replace a few positions
            pos = torch.randint(1, T + 1, (B, 2), generator=g)
            ids.scatter_(1, pos, torch.randint(RARE[0], V, (B, 2), generator=g))
        return ids[:, :-1], ids[:, 1:]

    batches = [batch(i) for i in range(steps)]

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    opt = torch.optim.Adagrad(model.parameters(), lr=0.02)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
