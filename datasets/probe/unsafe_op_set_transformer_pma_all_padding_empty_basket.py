"""Set Transformer (Lee et al. 2019) basket model: item embeddings -> SAB -> PMA pooling
(hand-written pooling-by-attention, padded slots filled with -inf before the softmax) -> predict next-category.
Baskets are padded to a fixed size; a legitimate session with an EMPTY basket (user opened the
cart and left) has every key masked. Softmax over a row of all -inf is 0/0 = NaN inside the
pooling, so the pooled vector and the loss are NaN as soon as such a basket appears.
ORIGIN: pma (its masked softmax over an all -inf row produces the first NaN; nn.MultiheadAttention in the SAB guards this case itself).
Fix: guard empty sets - unmask one (zero) slot for rows with no valid item."""
import torch, torch.nn as nn
CAUSE = "unsafe_op"
ORIGIN = "pma"
SOURCE = "Set Transformer PMA ports; known NaN from softmax over fully masked (all -inf) rows"
class SAB(nn.Module):
    def __init__(s, k, heads):
        super().__init__(); s.attn = nn.MultiheadAttention(k, heads, batch_first=True); s.ff = nn.Sequential(nn.Linear(k, k), nn.ReLU(), nn.Linear(k, k)); s.n1 = nn.LayerNorm(k); s.n2 = nn.LayerNorm(k)
    def forward(s, x, m):
        x = s.n1(x + s.attn(x, x, x, key_padding_mask=m, need_weights=False)[0]); return s.n2(x + s.ff(x))
class PMA(nn.Module):
    def __init__(s, k):
        super().__init__(); s.seed = nn.Parameter(torch.randn(1, k) * 0.1); s.k = nn.Linear(k, k); s.v = nn.Linear(k, k)
    def forward(s, x, m):
        a = (s.k(x) @ s.seed.t()).squeeze(-1) / x.shape[-1] ** .5
        a = a.masked_fill(m, float("-inf")).softmax(-1)
        return (a[..., None] * s.v(x)).sum(1)
class SetTransformer(nn.Module):
    def __init__(s, n, k, heads, nc, guard):
        super().__init__(); s.guard = guard
        s.emb = nn.Embedding(n + 1, k, padding_idx=0); s.sab = SAB(k, heads)
        s.pma = PMA(k); s.out = nn.Linear(k, nc)
    def forward(s, items):
        m = items == 0
        if s.guard: m = m.clone(); m[m.all(1), 0] = False
        x = s.sab(s.emb(items), m)
        return s.out(s.pma(x, m))
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    n, k, heads, S, bs, steps, bad = [(100, 32, 4, 8, 32, 60, 20), (150, 24, 2, 10, 48, 70, 45), (80, 48, 4, 6, 24, 50, 8)][seed]
    nc = 5; model = SetTransformer(n, k, heads, nc, fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    batches = []
    for i in range(steps):
        y = torch.randint(0, nc, (bs,), generator=g)
        items = 1 + (y[:, None] * (n // nc) + torch.randint(0, n // nc, (bs, S), generator=g)) % n
        ln = torch.randint(1, S + 1, (bs,), generator=g)
        if i == bad: ln[torch.randint(0, bs, (1,), generator=g)] = 0
        items = items * (torch.arange(S)[None] < ln[:, None])
        batches.append((items, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
