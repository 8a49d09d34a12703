"""node2vec-style random-walk embedding with a distance decoder (a single
embedding table, score = b - ||z_i - z_j||, as in Euclidean/"distance" graph
embeddings) trained with skip-gram negative sampling and a stable logsigmoid
loss. The distance is written by hand as torch.sqrt(((zi - zj) ** 2).sum(-1)).

Mechanism: most batches use walks of length 1 (context = a neighbour, never the
node itself, since the graph has no self-loops), and the run is calm. Now and
then a batch uses 2-step walks (the walk-length sampler); a walk that steps
u -> v -> u returns to its start, so the (center, context) pair is (u, u) and
zi - zj is exactly 0. sqrt(0) is fine in the forward, but its backward is
0.5/sqrt(0) = inf, multiplied by the zero difference gives NaN in the embedding
gradient, Adam writes NaN into the table and the loss is NaN from the next step.
ORIGIN is the embedding table (emb) feeding the unsafe sqrt (the op has no module).
Fix: epsilon inside the sqrt (sqrt(sum + 1e-9)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "emb"
SOURCE = "hand-written Euclidean distance in embedding models: sqrt backward at 0 -> NaN (pytorch/pytorch issues on torch.sqrt / cdist gradient at zero distance)"


class DistNode2Vec(nn.Module):
    def __init__(self, n, d, eps):
        super().__init__()
        self.emb = nn.Embedding(n, d)
        nn.init.normal_(self.emb.weight, std=0.5)
        self.b = nn.Parameter(torch.tensor(2.0))
        self.eps = eps

    def dist(self, a, b):
        return torch.sqrt(((a - b) ** 2).sum(-1) + self.eps)

    def forward(self, center, ctx, neg):
        zc = self.emb(center)
        pos = self.b - self.dist(zc, self.emb(ctx))
        negs = self.b - self.dist(zc.unsqueeze(1), self.emb(neg))
        return torch.cat([pos.unsqueeze(1), negs], 1)


def sgns_loss(scores, _):
    return -(F.logsigmoid(scores[:, 0]).mean() + F.logsigmoid(-scores[:, 1:]).sum(-1).mean())


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=120, c=3, d=16, B=128, K=5, lr=0.02, steps=80), dict(n=200, c=4, d=32, B=64, K=8, lr=0.025, steps=100),
           dict(n=90, c=2, d=8, B=128, K=4, lr=0.03, steps=70)][seed % 3]
    g = torch.Generator().manual_seed(seed)
    n, c = cfg["n"], cfg["c"]
    comm = torch.randint(0, c, (n,), generator=g)
    p = torch.where(comm[:, None] == comm[None, :], 0.15, 0.005)
    a = (torch.rand(n, n, generator=g) < p).float()
    a = torch.triu(a, 1); a = a + a.T
    a[torch.arange(n), (torch.arange(n) + 1) % n] = 1; a[(torch.arange(n) + 1) % n, torch.arange(n)] = 1
    deg = a.sum(1)
    batches = []
    for step in range(cfg["steps"]):
        start = torch.randint(0, n, (cfg["B"],), generator=g)
        walk_len = 2 if (step > 15 and torch.rand(1, generator=g).item() < 0.08) else 1
        cur = start
        for _w in range(walk_len):
            probs = a[cur] / deg[cur, None]
            cur = torch.multinomial(probs, 1, generator=g).squeeze(1)
        neg = (start[:, None] + torch.randint(1, n, (cfg["B"], cfg["K"]), generator=g)) % n  # never the center
        batches.append(((start, cur, neg), torch.zeros(cfg["B"])))
    torch.manual_seed(seed)
    model = DistNode2Vec(n, cfg["d"], 1e-9 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=sgns_loss, batches=batches, steps=cfg["steps"])
