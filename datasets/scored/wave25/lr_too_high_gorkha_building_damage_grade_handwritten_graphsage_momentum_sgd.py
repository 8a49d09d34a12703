"""Disaster damage assessment: hand-written GraphSAGE over a building adjacency graph (Gorkha 2015).

Domain: after the 2015 Gorkha (Nepal) earthquake, household surveys recorded each building's
damage grade (1-5) with structural attributes (age, floors, plinth area, foundation /
superstructure type, position). Damage is spatially correlated (shaking intensity, soil), so the
analyst builds a k-nearest-neighbour graph of buildings in each ward and trains a GraphSAGE
(mean aggregator, written by hand) to regress the damage grade with MSE. Each step is one ward
subgraph; the optimiser is SGD with Nesterov momentum.

Mechanism: the learning rate is taken from a tabular linear-regression baseline on the same
standardised features (lr ~ 0.7-0.9, stable for that convex problem). With momentum 0.9 the effective step is ~10x larger,
and the two SAGE layers plus the head compose to a much steeper loss surface than a linear
model: the first updates overshoot, each step amplifies the error instead of reducing it, the
weights and predictions grow geometrically, and within 3-10 steps the MSE overflows to
inf / NaN.

ORIGIN: None -- the overshoot is driven by the global step size and affects all layers at once.

Fix: lr = 0.01 with the same momentum, model, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("2015 Gorkha earthquake building damage dataset (Nepal NPC / Kathmandu Living Labs, "
          "DrivenData 'Richter's Predictor'); GraphSAGE (Hamilton et al. 2017) mean aggregator; "
          "SGD divergence with too large a step (Goodfellow et al., Deep Learning, 8.1-8.3)")


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.neigh_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, h, adj_mean):
        return torch.relu(self.self_lin(h) + self.neigh_lin(adj_mean @ h))


class DamageSAGE(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.sage1 = SAGELayer(d_in, hidden)
        self.sage2 = SAGELayer(hidden, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, adj_mean):
        h = self.sage2(self.sage1(x, adj_mean), adj_mean)
        return self.head(h).squeeze(-1)


def _ward(g, n, k, d_in):
    xy = torch.rand(n, 2, generator=g)
    d = torch.cdist(xy, xy) + torch.eye(n) * 1e9
    nn_idx = d.topk(k, largest=False).indices
    adj = torch.zeros(n, n)
    adj.scatter_(1, nn_idx, 1.0)
    adj_mean = adj / adj.sum(1, keepdim=True)
    # spatially smooth shaking intensity + structural vulnerability
    epic = torch.rand(2, generator=g)
    pga = torch.exp(-3.0 * ((xy - epic) ** 2).sum(1)) + 0.1 * torch.randn(n, generator=g)
    x = torch.randn(n, d_in, generator=g)          # standardised structural attributes
    vuln = 0.6 * x[:, 0] + 0.4 * x[:, 1] - 0.3 * x[:, 2] + 0.3 * x[:, 3] * x[:, 4]
    grade = 3.0 + 1.2 * (pga - 0.4) / 0.3 + 0.8 * vuln + 0.2 * torch.randn(n, generator=g)
    grade = grade.clamp(1, 5)
    # observed pga proxy is only available as distance to the mapped fault trace
    x[:, -1] = (((xy - epic) ** 2).sum(1).sqrt() - 0.5) / 0.25
    return (x, adj_mean), grade


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [64, 96, 48][seed % 3]
    n_nodes = [96, 128, 80][seed % 3]
    k = [6, 8, 5][seed % 3]
    lr = 0.01 if fixed else [0.7, 0.9, 0.8][seed % 3]
    d_in, steps = 10, 100
    batches = [_ward(g, n_nodes, k, d_in) for _ in range(steps)]
    model = DamageSAGE(d_in, hidden)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
