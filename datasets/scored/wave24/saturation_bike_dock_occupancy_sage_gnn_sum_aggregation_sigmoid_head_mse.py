"""Bike-share dock-occupancy forecaster (GraphSAGE-style, written by hand): stations of a
dense downtown system are nodes, stations within walking distance are neighbours; each
snapshot gives standardised node features (bikes now, pickups/returns in the last 15/30 min,
capacity, hour sin/cos, weekday flag, rain) and the target is the fill ratio
bikes/capacity in 30 min, in [0, 1]. Two message-passing layers; the readout layer outputs
``sigmoid(self + aggregated neighbours)`` so the prediction is a valid fraction; MSE, SGD
with momentum.

Mechanism: both layers aggregate neighbours with a plain SUM (``A @ H``, A the 0/1 adjacency)
instead of the mean. Downtown stations have ~35-45 neighbours on average, the first layer's
summed features are already several times too large, and the hidden features entering the
readout are non-negative ReLU outputs, so the readout's neighbour term is a sum of dozens
of same-signed contributions: the pre-sigmoid logits have a median |z| of ~150-300 at
step 0 and the sigmoid is pinned at 0 or 1. Its derivative (< 1e-3 for ~95% of stations,
~0 for most) multiplies every gradient in the network, the weights barely move, and the
MSE stays at its initial level -- a stall with no non-finite value.

ORIGIN = "readout": the layer whose summed neighbour aggregation produces the oversized
pre-activations of the saturating sigmoid (``out_act``, which has no parameters); the first
layer's ReLU cannot saturate, it only inflates the scale that the readout then sums again.

Fix: mean aggregation (row-normalise A by degree, the GraphSAGE 'mean' aggregator) so the
pre-activations stay O(1). Same model, data, optimiser, lr and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "readout"
SOURCE = ("Hamilton et al. 2017 GraphSAGE (mean vs sum aggregators); Xu et al. 2019 GIN notes "
          "sum aggregation scales with degree; bike-share station demand GNNs (e.g. Citi Bike / "
          "Divvy dock-availability forecasting); sigmoid saturation, Glorot & Bengio 2010")


class SageLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.nb_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, h, A):
        return self.self_lin(h) + self.nb_lin(A @ h)


class DockGNN(nn.Module):
    def __init__(self, A, d_in, hidden):
        super().__init__()
        self.register_buffer("A", A)
        self.conv1 = SageLayer(d_in, hidden)
        self.act = nn.ReLU()
        self.readout = SageLayer(hidden, 1)
        self.out_act = nn.Sigmoid()

    def forward(self, x):
        h = self.act(self.conv1(x, self.A))
        return self.out_act(self.readout(h, self.A)).squeeze(-1)


def _system(g, n_st, radius):
    pos = torch.randn(n_st, 2, generator=g) * 0.8            # km, dense downtown
    d = torch.cdist(pos, pos)
    A = ((d < radius) & (d > 0)).float()
    return pos, A


def _snapshots(g, n, pos, A, d_in):
    n_st = pos.shape[0]
    cap = 15 + 20 * torch.rand(n_st, generator=g)
    hour = 24 * torch.rand(n, 1, generator=g)
    commute_in = torch.exp(-0.5 * ((hour - 8.5) / 1.2) ** 2) - torch.exp(-0.5 * ((hour - 17.5) / 1.5) ** 2)
    centrality = torch.exp(-pos.norm(dim=1))                  # downtown core fills in the morning
    fill = torch.rand(n, n_st, generator=g)
    net = 0.3 * commute_in * (centrality - centrality.mean()) * 4 + 0.1 * torch.randn(n, n_st, generator=g)
    nb_fill = (A @ fill.T).T / A.sum(1).clamp_min(1)
    target = (0.6 * fill + 0.25 * nb_fill + net + 0.075).clamp(0.02, 0.98)
    rain = (torch.rand(n, 1, generator=g) < 0.2).float()
    x = torch.stack([fill, net * 3 + 0.1 * torch.randn(n, n_st, generator=g),
                     net * 2 + 0.1 * torch.randn(n, n_st, generator=g), cap.expand(n, -1),
                     torch.sin(hour / 24 * 6.28).expand(-1, n_st), torch.cos(hour / 24 * 6.28).expand(-1, n_st),
                     rain.expand(-1, n_st), centrality.expand(n, -1)], 2)
    x = (x - x.mean((0, 1))) / x.std((0, 1)).clamp_min(1e-6)
    return x, target


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    n_st = [120, 150, 100][seed % 3]
    radius = [1.0, 0.9, 1.2][seed % 3]
    hidden = [32, 64, 48][seed % 3]
    bs = [8, 6, 10][seed % 3]
    lr = [0.05, 0.03, 0.05][seed % 3]
    steps = 120
    pos, A = _system(g, n_st, radius)
    x, y = _snapshots(g, steps * bs, pos, A, 8)
    if fixed:
        A = A / A.sum(1, keepdim=True).clamp_min(1.0)       # mean aggregator
    torch.manual_seed(seed)
    model = DockGNN(A, 8, hidden)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
