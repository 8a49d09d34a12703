"""Unsupervised combinatorial optimisation in the style of "Erdos Goes Neural" (Karalias &
Loukas, NeurIPS 2020) for Maximum Independent Set: a GIN encoder (sum aggregation) outputs a
per-node probability p = sigmoid(logit), trained without labels on the probabilistic-penalty
loss  L = -sum_i p_i + beta * sum_{(i,j) in E} p_i p_j  (expected set size vs. expected
number of violated edges), averaged over graphs. Adam.

Mechanism: the reference encoder has a BatchNorm after every GIN layer. The user removed the
BatchNorm layers ("batch of graphs of different sizes"). On these dense graphs (average degree
~15..30) each GIN layer sums ~deg neighbour states, so the activation scale multiplies by
~deg per layer; after three layers the node logits are in the hundreds to thousands. The
output sigmoid ``prob`` is saturated at exactly 0 or 1 for every node: sigma' underflows to 0,
no gradient reaches any weight, and the loss stays at the value of whatever hard 0/1 set the
random network produced.

ORIGIN: ``prob`` - the output sigmoid that saturates on the un-normalised sum-aggregated logits.

Fix: put the BatchNorm1d back after each GIN layer (normalisation of the aggregated states),
nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "prob"
SOURCE = ("Karalias & Loukas 2020, Erdos Goes Neural (Stalence/erdos_neu) GIN + BatchNorm "
          "encoder; re-implementation without BatchNorm on dense graphs")


class GINLayer(nn.Module):
    def __init__(self, fin, h, norm):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(fin, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.norm = nn.BatchNorm1d(h) if norm else nn.Identity()

    def forward(self, x, adj):
        z = self.mlp(x + adj @ x)               # GIN, eps = 0, sum aggregation
        B, N, H = z.shape
        return self.norm(z.reshape(B * N, H)).view(B, N, H)


class EGNEncoder(nn.Module):
    def __init__(self, h, layers, norm):
        super().__init__()
        self.layers = nn.ModuleList([GINLayer(2 if i == 0 else h, h, norm) for i in range(layers)])
        self.head = nn.Linear(h, 1)
        self.prob = nn.Sigmoid()

    def forward(self, feats, adj):
        x = feats
        for layer in self.layers:
            x = layer(x, adj)
        return self.prob(self.head(x).squeeze(-1)), adj


def _graphs(g, B, N, p):
    a = torch.triu((torch.rand(B, N, N, generator=g) < p).float(), 1)
    adj = a + a.transpose(1, 2)
    deg = adj.sum(-1, keepdim=True)
    feats = torch.cat([torch.ones(B, N, 1), deg], -1)    # constant + raw degree
    return (feats, adj), None


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=32, layers=3, N=40, p=0.5, B=8, beta=1.5, lr=1e-3, steps=80),
           dict(h=64, layers=2, N=60, p=0.5, B=6, beta=1.2, lr=2e-3, steps=70),
           dict(h=48, layers=4, N=30, p=0.5, B=10, beta=2.0, lr=1e-3, steps=90)][seed % 3]
    torch.manual_seed(seed)
    model = EGNEncoder(cfg["h"], cfg["layers"], norm=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(271 + seed)
    batches = [_graphs(g, cfg["B"], cfg["N"], cfg["p"]) for _ in range(cfg["steps"])]
    beta = cfg["beta"]

    def egn_loss(out, _):
        p, adj = out
        size = p.sum(-1)
        violations = 0.5 * torch.einsum("bi,bij,bj->b", p, adj, p)
        return (-size + beta * violations).mean()

    return dict(model=model, optimizer=opt, loss_fn=egn_loss, batches=batches, steps=cfg["steps"])
