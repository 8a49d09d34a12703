"""Graph Barlow Twins (Bielak et al. 2022): a hand-written 2-layer GCN (A_hat X W with
symmetric normalisation, BatchNorm + PReLU) encodes two augmented views of the same graph
(random edge dropping + feature masking, redrawn every step); the loss is the Barlow Twins
redundancy-reduction objective on per-dimension standardised node embeddings, *summed*
over dimensions: sum_i (1 - C_ii)^2 + lambda * sum_{i!=j} C_ij^2, AdamW.

Healthy, though a naive monitor may flag it: the loss is a sum over 64-128 embedding
dimensions, so it starts in the tens and stays well above 1 even when training
is going well; it is noisy from step to step because both the edge set and the feature
mask are resampled each step; and the inputs are sparse binary bag-of-words, so many
first-layer weight gradients are exactly zero on a given step.  The loss falls steadily
and no value is ever non-finite.

ORIGIN: None - nothing is broken.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Graph Barlow Twins (Bielak, Kajdanowicz & Chawla 2022), reference hyper-parameters "
          "(lambda ~ 1/D, edge drop + feature masking, AdamW)")


class GCN(nn.Module):
    def __init__(self, d_in, hid, emb):
        super().__init__()
        self.lin1 = nn.Linear(d_in, hid)
        self.bn1 = nn.BatchNorm1d(hid)
        self.act1 = nn.PReLU(hid)
        self.lin2 = nn.Linear(hid, emb)

    def forward(self, x, a_hat):
        h = self.act1(self.bn1(a_hat @ self.lin1(x)))
        return a_hat @ self.lin2(h)


class GraphBarlow(nn.Module):
    def __init__(self, d_in, hid, emb):
        super().__init__()
        self.gcn = GCN(d_in, hid, emb)

    def forward(self, xa, aa, xb, ab):
        return self.gcn(xa, aa), self.gcn(xb, ab)


def make_loss(lam):
    def barlow_sum(out, target):
        za, zb = out
        n = za.shape[0]
        za = (za - za.mean(0)) / za.std(0).clamp_min(1e-4)
        zb = (zb - zb.mean(0)) / zb.std(0).clamp_min(1e-4)
        c = za.T @ zb / n
        diag = torch.diagonal(c)
        return (1 - diag).pow(2).sum() + lam * (c.pow(2).sum() - diag.pow(2).sum())
    return barlow_sum


def _norm_adj(A):
    A = A + torch.eye(A.shape[0])
    d = A.sum(1).rsqrt()
    return d[:, None] * A * d[None, :]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n = [300, 240, 360][seed % 3]
    d_in = [100, 80, 120][seed % 3]
    hid = [128, 96, 160][seed % 3]
    emb = [64, 96, 128][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    p_edge, p_feat = [(0.3, 0.2), (0.4, 0.3), (0.25, 0.15)][seed % 3]
    steps = 120
    k = 5
    comm = torch.randint(0, k, (n,), generator=g)
    same = comm[:, None] == comm[None, :]
    P = torch.where(same, torch.tensor(0.06), torch.tensor(0.003))
    A = torch.triu((torch.rand(n, n, generator=g) < P).float(), 1)
    topic = torch.rand(k, d_in, generator=g) ** 3
    X = (torch.rand(n, d_in, generator=g) < 0.04 + 0.3 * topic[comm]).float()
    batches = []
    for _ in range(steps):
        def view():
            keep_e = torch.triu((torch.rand(n, n, generator=g) > p_edge).float(), 1)
            Ad = A * keep_e
            keep_f = (torch.rand(1, d_in, generator=g) > p_feat).float()
            return X * keep_f, _norm_adj(Ad + Ad.T)
        xa, aa = view()
        xb, ab = view()
        batches.append(((xa, aa, xb, ab), torch.zeros(n)))
    model = GraphBarlow(d_in, hid, emb)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-5)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1.0 / emb), batches=batches, steps=steps)
