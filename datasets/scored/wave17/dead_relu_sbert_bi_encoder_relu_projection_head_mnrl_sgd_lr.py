"""SBERT-style bi-encoder (bitext/paraphrase mining: shared token embeddings + 1-layer transformer encoder, mean pooling, then a
Linear -> ReLU projection head) trained with MultipleNegativesRankingLoss (in-batch negatives,
cosine similarity x 20). The user trains with plain momentum SGD and applies the linear lr-scaling
rule as lr = base_lr * batch_size (instead of base_lr * batch_size / 256), giving lr ~1-2.

Mechanism: the first large steps drive the projection pre-activations negative for every
sentence; the ReLU units die, every sentence embedding becomes the zero vector, all cosine
similarities are 0, the loss sits at log(batch) and no gradient reaches the projection or the
encoder any more: a stall.
ORIGIN: proj_act, the projection ReLU whose units die.
Fix: the base learning rate (0.04-0.05), i.e. a batch-size-times smaller lr.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "dead_relu"
ORIGIN = "proj_act"
SOURCE = "sentence-transformers MultipleNegativesRankingLoss bi-encoder with a Dense(activation=ReLU) projection layer; dying ReLU under a large SGD lr"

class BiEncoder(nn.Module):
    def __init__(s, V, d, p):
        super().__init__()
        s.emb = nn.Embedding(V, d, padding_idx=0)
        s.encoder = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        s.proj = nn.Linear(d, p); s.proj_act = nn.ReLU()
    def embed(s, x):
        m = (x != 0).float().unsqueeze(-1)
        h = (s.encoder(s.emb(x)) * m).sum(1) / m.sum(1)
        return s.proj_act(s.proj(h))
    def forward(s, a, b):
        return s.embed(a), s.embed(b)

def build(seed: int, fixed: bool = False) -> dict:
    d, p, lr, B = [(32, 64, 0.05, 32), (48, 48, 0.05, 24), (32, 96, 0.04, 48)][seed % 3]
    torch.manual_seed(seed)
    V, T, steps = 60, 12, 150
    model = BiEncoder(V, d, p)
    g = torch.Generator().manual_seed(70 + seed)
    trans = torch.cat([torch.zeros(1, dtype=torch.long), 1 + torch.randperm(V - 1, generator=g)])
    batches = []
    for _ in range(steps):
        a = torch.randint(1, V, (B, T), generator=g)
        keep = torch.rand(B, T, generator=g) > 0.2
        b = torch.where(keep, trans[a], torch.randint(1, V, (B, T), generator=g))  # noisy translation pair
        batches.append(((a, b), torch.arange(B)))
    def loss_fn(out, y):
        u, v = out
        return F.cross_entropy(20.0 * F.normalize(u, dim=-1) @ F.normalize(v, dim=-1).T, y)
    opt = torch.optim.SGD(model.parameters(), lr=lr if fixed else lr * B, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
