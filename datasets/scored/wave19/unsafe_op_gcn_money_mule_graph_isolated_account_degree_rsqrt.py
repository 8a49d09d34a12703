"""Money-mule GCN on transfer subgraphs: D^-1/2 of an isolated account (degree 0) -> inf * 0.

Mechanism: a hand-written 2-layer GCN (Kipf & Welling propagation D^-1/2 A D^-1/2) flags
mule accounts in sampled subgraphs of the account-to-account transfer graph. The layer
computes `deg.pow(-0.5)` with no guard and the author left out the self-loops (mules are
meant to be recognised from their counterparties, not from themselves). Subgraphs are
sampled around seed accounts, so every node normally has at least one transfer inside the
subgraph, and training is calm. Then a subgraph contains a freshly opened account with no
transfers yet: deg = 0 -> deg^-1/2 = inf, and d_i * A_ij * d_j = inf * 0 = NaN along its row
and column. A_hat @ X spreads the NaN to every node, the loss is NaN and so is every later
step.

ORIGIN: `conv1`, the first GCN layer, whose normalisation computes deg^-1/2 and produces the
first non-finite value.

Fix: `deg.clamp_min(1)` before the inverse square root (isolated nodes then aggregate
nothing), as PyG's gcn_norm does by masking inf to 0; same data, model and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "conv1"
SOURCE = ("Kipf & Welling 2017 GCN propagation rule hand-written for fraud/money-mule "
          "graphs; PyG gcn_norm guards deg_inv_sqrt==inf -> 0, hand-rolled versions without "
          "self-loops produce NaN on isolated nodes")


class DenseGCNLayer(nn.Module):
    def __init__(self, d_in, d_out, safe):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.safe = safe

    def forward(self, x, adj):
        deg = adj.sum(dim=1)
        if self.safe:
            deg = deg.clamp_min(1.0)
        d = deg.pow(-0.5)
        a_hat = d.unsqueeze(1) * adj * d.unsqueeze(0)
        return a_hat @ self.lin(x)


class MuleGCN(nn.Module):
    def __init__(self, d_in, hidden, safe):
        super().__init__()
        self.conv1 = DenseGCNLayer(d_in, hidden, safe)
        self.conv2 = DenseGCNLayer(hidden, hidden, safe)
        self.cls = nn.Linear(d_in + hidden, 2)  # skip connection of raw account features

    def forward(self, x, adj):
        h = F.relu(self.conv1(x, adj))
        h = F.relu(self.conv2(h, adj))
        return self.cls(torch.cat([x, h], dim=1))


def _subgraph(g, n, d_in, p_mule, isolated):
    mule = torch.rand(n, generator=g) < p_mule
    x = torch.randn(n, d_in, generator=g)
    x[:, 0] += 0.4 * mule.float()  # young accounts
    # transfers: mules receive from many victims and forward to a few cash-out accounts
    p = torch.full((n, n), 0.03)
    p[mule] += 0.12
    p[:, mule] += 0.12
    adj = (torch.rand(n, n, generator=g) < p).float()
    adj = torch.triu(adj, diagonal=1)
    adj = adj + adj.t()
    # sampled around seed accounts: make sure every node has a counterparty in the subgraph
    lonely = (adj.sum(1) == 0).nonzero().flatten()
    for i in lonely.tolist():
        j = (i + 1 + int(torch.randint(0, n - 1, (1,), generator=g))) % n
        adj[i, j] = adj[j, i] = 1.0
    if isolated:
        k = int(torch.randint(0, n, (1,), generator=g))
        adj[k, :] = 0.0
        adj[:, k] = 0.0  # freshly opened account: no transfers yet
    # counterparty signal: share of mule neighbours
    x[:, 1] += 0.8 * (adj @ mule.float()) / adj.sum(1).clamp_min(1)
    return (x, adj), mule.long()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    cfg = [
        dict(n=96, d_in=12, hidden=32, lr=1e-2, steps=80, bad=47),
        dict(n=128, d_in=16, hidden=48, lr=8e-3, steps=90, bad=29),
        dict(n=64, d_in=10, hidden=24, lr=2e-2, steps=100, bad=66),
    ][seed % 3]
    model = MuleGCN(cfg["d_in"], cfg["hidden"], safe=fixed)
    batches = [_subgraph(g, cfg["n"], cfg["d_in"], 0.15, isolated=(step == cfg["bad"]))
               for step in range(cfg["steps"])]
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=5e-4)
    weight = torch.tensor([1.0, 3.0])
    return dict(model=model, optimizer=optimizer,
                loss_fn=nn.CrossEntropyLoss(weight=weight), batches=batches,
                steps=cfg["steps"])
