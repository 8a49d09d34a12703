"""Healthy: DPR-style dense passage retriever (Karpukhin et al. 2020), tiny: separate query and
passage encoders (embedding -> 1-layer TransformerEncoder -> [CLS]), L2-normalised embeddings,
in-batch-negative InfoNCE with temperature 0.05 (logits up to +-20); AdamW.  Mid-run the sampler
switches on BM25-mined hard negatives (an extra passage per query that shares most terms).

Looks alarming but is fine: the 1/0.05 temperature makes the logits and the gradients large
(20x a plain dot product), the loss jumps up when the hard negatives arrive, and the in-batch
cross-entropy over 2*B candidates starts above log(2B).  It converges and recovers from the
jump.
ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Karpukhin et al. 2020 'Dense Passage Retrieval'; sentence-transformers "
          "MultipleNegativesRankingLoss (scale 20 = temperature 0.05) with hard negatives")


class Tower(nn.Module):
    def __init__(self, V, d):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 1)

    def forward(self, x):
        return F.normalize(self.enc(self.emb(x)).mean(1), dim=-1)


class DPR(nn.Module):
    def __init__(self, V, d):
        super().__init__()
        self.q_enc = Tower(V, d)
        self.p_enc = Tower(V, d)

    def forward(self, q, p):
        return self.q_enc(q) @ self.p_enc(p).T / 0.05


def build(seed: int, fixed: bool = False) -> dict:
    d, bs, lr, hard_from = [(16, 8, 2e-3, 35), (24, 6, 1.5e-3, 45), (16, 10, 2e-3, 25)][seed % 3]
    V, Lq, Lp = 60, 4, 8
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    model = DPR(V, d)
    steps = 70
    batches = []
    for t in range(steps):
        q = torch.randint(0, V, (bs, Lq), generator=g)
        pos = torch.cat([q, torch.randint(0, V, (bs, Lp - Lq), generator=g)], 1)
        pos = pos[:, torch.randperm(Lp, generator=g)]
        if t >= hard_from:   # BM25 hard negative: shares 3 of the 4 query terms
            neg = torch.cat([q[:, :3], torch.randint(0, V, (bs, Lp - 3), generator=g)], 1)
        else:
            neg = torch.randint(0, V, (bs, Lp), generator=g)
        batches.append(((q, torch.cat([pos, neg], 0)), torch.arange(bs)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
