"""Code search bi-encoder (CodeSearchNet-style) for a low-resource programming language:
a small shared transformer encoder embeds natural-language queries and code snippets
(mean-pooled over non-padding tokens) and an in-batch-negatives softmax (InfoNCE) matches
each query to its snippet.  Runs under float16 autocast with a GradScaler.  AdamW.

Why a naive monitor might flag it (all healthy):
- Forked repositories put identical snippets into the same batch; the duplicates of a
  query's positive are masked with -inf in the similarity matrix so they are not treated as
  negatives.  The logits therefore contain -inf entries at every step, but they are never a
  target, cross-entropy is finite and their gradient is exactly zero.
- Key-padding positions are masked with -inf before the attention softmax (every sequence
  keeps at least one real token, so no row is all -inf).
- The GradScaler starts at a high scale (2**20); the first steps overflow in the fp16
  backward, are skipped (parameters do not change at all on those steps) and the scale backs
  off until steps go through.  The loss is finite throughout and decreases.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("CodeSearchNet bi-encoder baselines (Husain et al. 2019) with in-batch negatives and "
          "duplicate masking (Allamanis 2019 'adverse effects of code duplication'); PyTorch AMP "
          "recipe: autocast + GradScaler skipping inf/NaN steps and backing off the scale.")

VOCAB = 500


class TinyEncoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.n1 = nn.LayerNorm(d)
        self.n2 = nn.LayerNorm(d)

    def forward(self, x, pad):
        B, L, D = x.shape
        q, k, v = self.qkv(self.n1(x)).reshape(B, L, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-1, -2) / (D // self.heads) ** 0.5
        s = s.masked_fill(pad[:, None, None, :], float("-inf"))
        a = torch.softmax(s, dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(B, L, D))
        return x + self.ff(self.n2(x))


class BiEncoder(nn.Module):
    def __init__(self, d, heads, layers):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=0)
        self.pos = nn.Embedding(32, d)
        self.layers = nn.ModuleList([TinyEncoderLayer(d, heads) for _ in range(layers)])
        self.temp = 0.05

    def encode(self, ids):
        pad = ids == 0
        x = self.tok(ids) + self.pos.weight[: ids.shape[1]]
        for layer in self.layers:
            x = layer(x, pad)
        keep = (~pad).unsqueeze(-1).to(x.dtype)
        e = (x * keep).sum(1) / keep.sum(1)
        return F.normalize(e.float(), dim=-1)

    def forward(self, query, code, dup):
        sim = self.encode(query) @ self.encode(code).t() / self.temp
        return sim.masked_fill(dup, float("-inf"))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 32][seed % 3]
    n_layers = [1, 1, 2][seed % 3]
    lr = [2e-3, 1.5e-3, 2e-3][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = 120
    Lq, Lc = 8, 16
    n_funcs = 300

    torch.manual_seed(seed)
    model = BiEncoder(d, 4, n_layers)

    # functions have intent words; docstrings and code share intent-specific tokens
    intent_tok = torch.randint(1, VOCAB, (n_funcs, 4), generator=g)
    batches = []
    for _ in range(steps):
        f = torch.randint(0, n_funcs, (bs,), generator=g)
        if bs >= 4:                                     # a forked copy lands in the batch
            f[1] = f[0]
        q = torch.randint(1, VOCAB, (bs, Lq), generator=g)
        c = torch.randint(1, VOCAB, (bs, Lc), generator=g)
        q[:, :3] = intent_tok[f, :3]
        c[:, :4] = intent_tok[f]
        qlen = torch.randint(4, Lq + 1, (bs,), generator=g)
        clen = torch.randint(8, Lc + 1, (bs,), generator=g)
        q = q.masked_fill(torch.arange(Lq) >= qlen.unsqueeze(1), 0)
        c = c.masked_fill(torch.arange(Lc) >= clen.unsqueeze(1), 0)
        same = f.unsqueeze(0) == f.unsqueeze(1)
        dup = same & ~torch.eye(bs, dtype=torch.bool)
        batches.append(((q, c, dup), torch.arange(bs)))

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 20)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
