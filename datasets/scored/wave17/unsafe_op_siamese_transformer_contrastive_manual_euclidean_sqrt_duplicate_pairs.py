"""Siamese transformer sentence encoder trained with the Hadsell et al. contrastive loss on
(duplicate-question style) pairs; the Euclidean distance is written by hand as
((u - v) ** 2).sum(-1).sqrt() inside the model's PairDistance module.

Mechanism: the run is calm until a batch contains exact duplicate pairs (the same question text on
both sides, common in Quora-style data). Their embeddings are identical, the squared distance is
exactly 0 and the backward of sqrt at 0 is inf; inf * 0 gives NaN gradients that poison the
shared encoder, so the next loss is NaN.
ORIGIN: distance, the PairDistance module where sqrt(0) is taken.
Fix: an epsilon inside the square root (sqrt(d2 + 1e-9)), as F.pairwise_distance does.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "unsafe_op"
ORIGIN = "distance"
SOURCE = "Siamese/Quora-duplicate contrastive loss with a hand-written Euclidean distance; sqrt(0) backward NaN on identical pairs (why pairwise_distance has eps)"

class PairDistance(nn.Module):
    def __init__(s, eps): super().__init__(); s.eps = eps
    def forward(s, u, v): return (((u - v) ** 2).sum(-1) + s.eps).sqrt()

class Siamese(nn.Module):
    def __init__(s, V, d, L, eps):
        super().__init__()
        s.emb = nn.Embedding(V, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        s.encoder = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.distance = PairDistance(eps)
    def encode(s, x): return s.encoder(s.emb(x)).mean(1)
    def forward(s, a, b): return s.distance(s.encode(a), s.encode(b))

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B, dup_from = [(1, 32, 1e-3, 32, 40), (2, 32, 2e-3, 24, 55), (1, 48, 1e-3, 16, 70)][seed % 3]
    torch.manual_seed(seed)
    V, T, steps, margin = 50, 10, 100, 1.0
    model = Siamese(V, d, L, 1e-9 if fixed else 0.0)
    g = torch.Generator().manual_seed(20 + seed)
    batches = []
    for i in range(steps):
        a = torch.randint(0, V, (B, T), generator=g)
        same = torch.rand(B, generator=g) < 0.5
        para = torch.where(torch.rand(B, T, generator=g) < 0.3, torch.randint(0, V, (B, T), generator=g), a)
        para[:, 0] = (a[:, 0] + torch.randint(1, V, (B,), generator=g)) % V     # paraphrases differ
        b = torch.where(same[:, None], para, torch.randint(0, V, (B, T), generator=g))
        if i >= dup_from and i % 7 == 0:
            b[:3] = a[:3]; same[:3] = True          # exact duplicate questions
        batches.append(((a, b), same.float()))
    def loss_fn(dist, y):
        return (y * dist.pow(2) + (1 - y) * F.relu(margin - dist).pow(2)).mean() / 2
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
