"""S2V-DQN (Dai, Khalil et al., NeurIPS 2017, "Learning combinatorial optimization algorithms
over graphs") for Max-Cut: structure2vec node embeddings
mu_v <- relu(th1 x_v + th2 sum_{u in N(v)} mu_u + th3 sum_u relu(th4 w_vu)) for T rounds, and
Q(S, v) = th5 . relu([th6 sum_u mu_u, th7 mu_v]). Q is regressed (MSE) onto the one-step
reward (the cut gain of adding v to the partial solution S) for the candidate nodes.

Mechanism: structure2vec has no normalisation: every round sums neighbour embeddings
(adj @ mu), so the embedding scale - and the gradient scale - grows with node degree and the
number of rounds T. The user took lr = 5e-3 .. 2e-2 with SGD+momentum from a generic GNN recipe
(mean-aggregation, normalised features). For this parameterisation the curvature is far
larger: the first updates overshoot, the Q values swing to +-1e3..1e6, the squared error
explodes and within a handful of steps the weights overflow to inf/NaN.

ORIGIN: None - the step size is wrong for the whole model, not one layer's weights.

Fix: lr = 1e-4 .. 5e-4 (the reference graph_comb_opt code uses 1e-4); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("S2V-DQN (Hanjun Dai / Elias Khalil, graph_comb_opt, lr 1e-4) PyTorch "
          "re-implementations trained with a generic GNN learning rate, Q-values diverge to NaN")


class S2VDQN(nn.Module):
    def __init__(self, p, T):
        super().__init__()
        self.T = T
        self.theta1 = nn.Linear(1, p, bias=False)
        self.theta2 = nn.Linear(p, p, bias=False)
        self.theta3 = nn.Linear(p, p, bias=False)
        self.theta4 = nn.Linear(1, p, bias=False)
        self.theta6 = nn.Linear(p, p, bias=False)
        self.theta7 = nn.Linear(p, p, bias=False)
        self.q_hidden = nn.Linear(2 * p, 2 * p, bias=False)
        self.q_relu = nn.ReLU()
        self.theta5 = nn.Linear(2 * p, 1, bias=False)

    def forward(self, x, w):
        # x: B,N,1 (1 = node already in S) ; w: B,N,N symmetric edge weights (0 = no edge)
        adj = (w > 0).float()
        edge_term = self.theta3((torch.relu(self.theta4(w.unsqueeze(-1))) * adj.unsqueeze(-1)).sum(2))
        mu = torch.zeros(x.shape[0], x.shape[1], self.theta2.in_features)
        for _ in range(self.T):
            mu = torch.relu(self.theta1(x) + self.theta2(adj @ mu) + edge_term)
        pooled = self.theta6(mu.sum(1, keepdim=True)).expand_as(mu)
        h = self.q_relu(self.q_hidden(torch.cat([pooled, self.theta7(mu)], -1)))
        return self.theta5(h).squeeze(-1)


def _instances(g, B, N, dens):
    w = torch.rand(B, N, N, generator=g)
    keep = torch.rand(B, N, N, generator=g) < dens
    w = torch.triu(w * keep, 1)
    w = w + w.transpose(1, 2)
    frac = torch.rand(B, 1, generator=g) * 0.6
    S = (torch.rand(B, N, generator=g) < frac).float()
    # cut gain of moving v into S: edges to nodes outside S become cut, edges into S stop being cut
    gain = (w * (1 - S).unsqueeze(1)).sum(-1) - (w * S.unsqueeze(1)).sum(-1)
    cand = 1 - S
    return (S.unsqueeze(-1), w), (gain, cand)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(p=32, T=3, N=12, dens=0.4, B=32, lr=0.01, good_lr=3e-4, steps=120),
           dict(p=48, T=4, N=15, dens=0.3, B=24, lr=0.005, good_lr=1e-4, steps=100),
           dict(p=64, T=2, N=10, dens=0.5, B=16, lr=0.02, good_lr=5e-4, steps=140)][seed % 3]
    torch.manual_seed(seed)
    model = S2VDQN(cfg["p"], cfg["T"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["good_lr"] if fixed else cfg["lr"], momentum=0.9)
    g = torch.Generator().manual_seed(55 + seed)
    batches = [_instances(g, cfg["B"], cfg["N"], cfg["dens"]) for _ in range(cfg["steps"])]

    def loss_fn(q, target):
        gain, cand = target
        return (((q - gain) ** 2) * cand).sum() / cand.sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
