"""SetRank-style listwise re-ranker (Pang et al. 2020): a Transformer encoder with self-attention
across the documents of a query's slate (padding mask for short slates) scores every item; the
loss is the ListNet top-one cross-entropy *summed* over the queries of the batch, as in many
LTR codebases.

Looks alarming but is healthy: slate lengths vary 5..30 per query and batches hold different
numbers of queries, so the summed loss jumps by 2-3x from batch to batch; padded positions
get -inf scores (masked_fill) before the softmax, which produces exact zeros and no NaN
because every slate has at least one real item; the pairwise gap keeps improving on average.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Pang et al. 2020 'SetRank: learning a permutation-invariant ranking model'; ListNet (Cao et al. 2007) summed per query"


class SetRank(nn.Module):
    def __init__(self, n_feat, d, layers):
        super().__init__()
        self.inp = nn.Linear(n_feat, d)
        enc = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        self.score = nn.Linear(d, 1)

    def forward(self, x, pad):
        h = self.enc(self.inp(x), src_key_padding_mask=pad)
        return self.score(h).squeeze(-1).masked_fill(pad, float("-inf"))


def listnet_sum(scores, rel):
    pad = torch.isinf(scores)
    target = torch.softmax(3.0 * rel.masked_fill(pad, float("-inf")), -1)
    logp = torch.log_softmax(scores, -1).masked_fill(pad, 0.0)
    return -(target * logp).sum()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, layers=1, lr=5e-3), dict(d=24, layers=2, lr=2e-3), dict(d=48, layers=1, lr=2e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1700 + seed)
    F = 10
    w = torch.randn(F, generator=g)
    model = SetRank(F, cfg["d"], cfg["layers"])
    steps = 90
    batches = []
    for _ in range(steps):
        Q = int(torch.randint(8, 14, (1,), generator=g))
        Lmax = 30
        lens = torch.randint(5, Lmax + 1, (Q,), generator=g)
        x = torch.randn(Q, Lmax, F, generator=g)
        pad = torch.arange(Lmax)[None] >= lens[:, None]
        rel = (x @ w / 2).clamp(-2, 2).round() + 2  # graded relevance 0..4
        batches.append(((x, pad), rel))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=listnet_sum, batches=batches, steps=steps)
