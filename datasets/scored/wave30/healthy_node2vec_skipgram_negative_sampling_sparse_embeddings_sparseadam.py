"""node2vec / DeepWalk representation learning: skip-gram with negative sampling over
random-walk co-occurrences on a community graph.  Two ``nn.Embedding(sparse=True)`` tables
(input and context vectors), logits = dot products for the true context and for K sampled
negatives, BCE-with-logits, ``torch.optim.SparseAdam``.

Healthy, though a naive monitor may flag it: the gradients are sparse tensors, and on any
step only the few hundred nodes that occur in the batch get a non-zero gradient row - most
rows of both tables have an exactly zero gradient and an exactly zero update on most steps;
the embeddings start tiny (N(0, 0.01)-scale for the input table, zeros for the context
table, as in word2vec), so the first updates are minute and the loss sits near (K+1)*log 2 for
a few steps before it falls.  The loss then decreases steadily; nothing is non-finite.

ORIGIN: None - nothing is broken.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("node2vec (Grover & Leskovec 2016) / DeepWalk with word2vec SGNS; PyG's Node2Vec "
          "uses sparse embeddings with torch.optim.SparseAdam")


class SkipGram(nn.Module):
    def __init__(self, n_nodes, dim):
        super().__init__()
        self.inp = nn.Embedding(n_nodes, dim, sparse=True)
        self.ctx = nn.Embedding(n_nodes, dim, sparse=True)
        nn.init.uniform_(self.inp.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.ctx.weight)

    def forward(self, center, context, negatives):
        u = self.inp(center)                                   # B, d
        pos = (u * self.ctx(context)).sum(-1, keepdim=True)    # B, 1
        neg = torch.bmm(self.ctx(negatives), u.unsqueeze(-1)).squeeze(-1)   # B, K
        return torch.cat([pos, neg], 1)


def sgns_loss(logits, labels):
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="sum") / logits.shape[0]


def _walks(g, nbrs, n_walks, length, n):
    starts = torch.randint(0, n, (n_walks,), generator=g)
    walks = [starts]
    cur = starts
    for _ in range(length - 1):
        nxt = torch.empty_like(cur)
        for i, v in enumerate(cur.tolist()):
            nb = nbrs[v]
            nxt[i] = nb[int(torch.randint(0, len(nb), (1,), generator=g))]
        walks.append(nxt)
        cur = nxt
    return torch.stack(walks, 1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n = [400, 300, 500][seed % 3]
    dim = [32, 64, 48][seed % 3]
    n_walks = [24, 32, 20][seed % 3]
    k_neg = [5, 10, 5][seed % 3]
    lr = [0.02, 0.01, 0.03][seed % 3]
    steps = 120
    walk_len, window, n_comm = 10, 3, 8
    comm = torch.randint(0, n_comm, (n,), generator=g)
    P = torch.where(comm[:, None] == comm[None, :], torch.tensor(0.08), torch.tensor(0.002))
    A = torch.triu((torch.rand(n, n, generator=g) < P), 1)
    A = A | A.T
    A[torch.arange(n), (torch.arange(n) + 1) % n] |= A.sum(1) == 0     # no isolated nodes
    nbrs = [torch.nonzero(A[i]).flatten() if A[i].any() else torch.tensor([(i + 1) % n]) for i in range(n)]
    deg = torch.tensor([len(v) for v in nbrs], dtype=torch.float)
    noise = deg ** 0.75
    batches = []
    for _ in range(steps):
        w = _walks(g, nbrs, n_walks, walk_len, n)
        cs, xs = [], []
        for off in range(1, window + 1):
            cs += [w[:, :-off].reshape(-1), w[:, off:].reshape(-1)]
            xs += [w[:, off:].reshape(-1), w[:, :-off].reshape(-1)]
        center, context = torch.cat(cs), torch.cat(xs)
        negs = torch.multinomial(noise, center.numel() * k_neg, replacement=True, generator=g).view(-1, k_neg)
        labels = torch.zeros(center.numel(), k_neg + 1)
        labels[:, 0] = 1.0
        batches.append(((center, context, negs), labels))
    model = SkipGram(n, dim)
    opt = torch.optim.SparseAdam(list(model.parameters()), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=sgns_loss, batches=batches, steps=steps)
