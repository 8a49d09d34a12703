"""Healthy: DiffPool (Ying et al. 2018) graph classifier with its two auxiliary losses.

Looks alarming: the assignment GNN's softmax is pushed toward one-hot rows by the
entropy regulariser, so many assignment probabilities sit at ~0/1 (saturated softmax,
tiny gradients into the pooling GNN); the link-prediction auxiliary loss
||A - S S^T||_F / N^2 cannot reach 0 and puts a floor under the total loss; graphs
in a batch have different sizes (padding with masked nodes), so the per-batch loss is
noisy. The classification term still learns (the graph label depends on whether edges
join nodes with equal or opposite feature sign, which a GNN layer detects), and the
total loss falls well below its starting value. After the classifier has converged
(CE ~ 0 within ~20 steps) the total is dominated by the slowly shrinking entropy term,
so the loss keeps a long, slow, seemingly stuck tail - it is still progressing.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "DiffPool (Ying et al., NeurIPS 2018) / PyG dense_diff_pool example: CE + link loss + entropy loss"


class DenseSAGE(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin_self = nn.Linear(i, o)
        self.lin_nei = nn.Linear(i, o, bias=False)

    def forward(self, x, adj, mask):
        deg = adj.sum(-1, keepdim=True).clamp_min(1)
        h = self.lin_self(x) + self.lin_nei(adj @ x / deg)
        return h * mask.unsqueeze(-1)


class DiffPoolNet(nn.Module):
    def __init__(self, f, h, n_clusters, n_classes):
        super().__init__()
        self.embed1 = DenseSAGE(f, h)
        self.embed2 = DenseSAGE(h, h)
        self.assign = DenseSAGE(f, n_clusters)
        self.pooled = DenseSAGE(h, h)
        self.act = nn.ReLU()
        self.cls = nn.Linear(h, n_classes)

    def forward(self, x, adj, mask):
        z = self.act(self.embed2(self.act(self.embed1(x, adj, mask)), adj, mask))
        s = torch.softmax(self.assign(x, adj, mask), dim=-1) * mask.unsqueeze(-1)
        xp = s.transpose(1, 2) @ z
        ap = s.transpose(1, 2) @ adj @ s
        link = torch.norm(adj - s @ s.transpose(1, 2), p=2, dim=(1, 2)) / mask.sum(1) ** 2
        ent = (-s * torch.log(s + 1e-15)).sum(-1).sum(-1) / mask.sum(1)
        hp = self.act(self.pooled(xp, ap, torch.ones(xp.shape[:2])))
        return self.cls(hp.mean(1)), link.mean() + ent.mean()


def loss_fn(out, y):
    logits, aux = out
    return F.cross_entropy(logits, y) + aux


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_max = [30, 24, 36][seed % 3]
    bs = [16, 32, 24][seed % 3]
    h = [32, 24, 48][seed % 3]
    n_clusters = [6, 4, 8][seed % 3]
    steps = [120, 100, 140][seed % 3]
    lr = [5e-3, 1e-2, 3e-3][seed % 3]
    F_in = 4

    def graph(label):
        n = int(torch.randint(n_max // 2, n_max + 1, (1,), generator=g))
        sgn = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
        same = sgn[:, None] == sgn[None, :]
        want = same if label == 1 else ~same  # homophilous vs heterophilous wiring
        p = torch.where(want, torch.tensor(0.3), torch.tensor(0.03))
        a = (torch.rand(n, n, generator=g) < p).float().triu(1)
        a = a + a.t()
        x = torch.cat([sgn[:, None] + 0.3 * torch.randn(n, 1, generator=g),
                       torch.randn(n, F_in - 1, generator=g)], 1)
        X = torch.zeros(n_max, F_in); A = torch.zeros(n_max, n_max); M = torch.zeros(n_max)
        X[:n] = x; A[:n, :n] = a; M[:n] = 1
        return X, A, M

    batches = []
    for _ in range(steps):
        y = torch.randint(0, 2, (bs,), generator=g)
        gs = [graph(int(l)) for l in y]
        X = torch.stack([t[0] for t in gs]); A = torch.stack([t[1] for t in gs]); M = torch.stack([t[2] for t in gs])
        batches.append(((X, A, M), y))

    model = DiffPoolNet(F_in, h, n_clusters, 2)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
