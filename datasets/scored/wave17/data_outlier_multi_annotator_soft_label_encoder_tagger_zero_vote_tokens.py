"""Token tagger (small transformer encoder + linear tagging head) trained on soft labels from
crowd annotation: target distribution = votes / votes.sum(-1), cross-entropy with probability
targets.

Mechanism: one shard contains tokens that no annotator labelled (all-zero vote vectors). The
normalisation 0/0 produces NaN target distributions in that single batch, so the loss (and every
gradient) becomes NaN at that step; the run was healthy before it.
ORIGIN: None (corrupt data).
Fix: the batch with unannotated tokens is filtered out (replaced by a clean batch).
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "learning from crowd/multi-annotator soft labels (Dawid-Skene / soft-label NER); a shard with unannotated tokens giving 0/0 NaN targets"

class Tagger(nn.Module):
    def __init__(s, V, d, L, K, T):
        super().__init__()
        s.emb = nn.Embedding(V, d); s.pos = nn.Embedding(T, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        s.encoder = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.tag_head = nn.Linear(d, K)
    def forward(s, x):
        return s.tag_head(s.encoder(s.emb(x) + s.pos(torch.arange(x.shape[1]))))

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B, bad = [(2, 32, 2e-3, 16, 35), (1, 48, 3e-3, 24, 50), (3, 32, 1e-3, 12, 65)][seed % 3]
    torch.manual_seed(seed)
    V, K, T, steps = 50, 5, 20, 90
    model = Tagger(V, d, L, K, T)
    g = torch.Generator().manual_seed(900 + seed)
    tag_of = torch.randint(0, K, (V,), generator=g)
    batches = []
    for i in range(steps):
        x = torch.randint(0, V, (B, T), generator=g)
        gold = (tag_of[x] + (x.roll(1, 1) % 2)) % K               # tag depends on token and left neighbour
        votes = 4 * F.one_hot(gold, K).float() + F.one_hot(torch.randint(0, K, (B, T), generator=g), K).float()
        if i == bad and not fixed:
            votes[:, T // 2:] = 0.0                                # unannotated tail of every sentence
        batches.append((x, votes / votes.sum(-1, keepdim=True)))
    loss_fn = lambda out, q: F.cross_entropy(out.reshape(-1, K), q.reshape(-1, K))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
