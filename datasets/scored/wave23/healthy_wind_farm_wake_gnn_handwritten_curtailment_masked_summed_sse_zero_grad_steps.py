"""HEALTHY. Wind-farm power prediction with wake interactions: a message-passing GNN written
by hand over the turbines of a farm (edges from every turbine to the turbines downstream
of it for the current wind direction, edge features = downstream/crosswind distance in
rotor diameters) predicts each turbine's power in MW from the free-stream wind speed
and direction measured at the met mast; summed squared error over turbines, averaged
over snapshots; SGD with momentum.

What a naive monitor would flag:
  * SCADA snapshots in which a turbine was curtailed (grid-operator set-point, noise
    mode, maintenance) are masked out of the loss. Every ~20..30 steps a whole batch falls
    into a farm-wide curtailment order (grid congestion): the loss of that step is
    exactly 0.0 and every gradient is exactly zero (the step is taken anyway, only
    momentum moves the weights).
  * The loss is a SUM over 16..36 turbines in MW^2 (the farm-level power error), so it
    starts at ~30..90 and ends at ~3..10, far above what a per-turbine MSE would show.
  * Large batch-to-batch jumps from the wind-speed mix and the varying number of valid
    turbines.
None of it is a failure: the masked mean over the non-curtailed turbines falls steadily.

ORIGIN = None (healthy: no failure starts anywhere).

Fix: none needed; fixed=True returns the identical run.
"""
import math

import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "GNN wake models for wind farms (Park & Law 2019, 'Physics-induced graph neural "
    "network for wind-farm power estimation'); Jensen/Park top-hat wake deficit; SCADA "
    "curtailment flags masked out of the loss as in IEC 61400-12 data filtering."
)

D = 1.0   # rotor diameter (unit)


def _layout(g, n_rows, n_cols):
    xs, ys = torch.meshgrid(torch.arange(n_cols).float() * 7 * D, torch.arange(n_rows).float() * 5 * D, indexing="xy")
    pos = torch.stack([xs.flatten(), ys.flatten()], 1)
    return pos + 0.5 * torch.randn(pos.shape, generator=g)


def _power_curve(u):
    return torch.where(u < 3, torch.zeros_like(u),
                       torch.where(u < 12, ((u - 3) / 9) ** 3, torch.where(u < 25, torch.ones_like(u), torch.zeros_like(u))))


P_RATED = 3.45   # MW


def _snapshot(g, pos, n, farm_curtailed):
    """Returns node features (n, N, 4), edge attributes (n, N, N, 3) and targets (n, N, 2)."""
    N = pos.shape[0]
    u0 = 4 + 10 * torch.rand(n, 1, generator=g)
    theta = 2 * math.pi * torch.rand(n, 1, generator=g)
    wdir = torch.cat([torch.cos(theta), torch.sin(theta)], 1)                          # (n, 2)
    rel = pos[None, :, None, :] - pos[None, None, :, :]                                 # (1, N, N, 2): i - j
    down = (rel * wdir[:, None, None, :]).sum(-1)                                       # i downstream of j
    cross = (rel[..., 0] * wdir[:, None, None, 1] - rel[..., 1] * wdir[:, None, None, 0]).abs()
    k = 0.05
    rw = D / 2 + k * down
    in_wake = (down > 0) & (cross < rw)
    deficit = torch.where(in_wake, (1 - math.sqrt(1 - 0.8)) / (1 + 2 * k * down / D) ** 2, torch.zeros_like(down))
    tot = torch.sqrt((deficit ** 2).sum(-1))                                             # (n, N)
    u = u0 * (1 - tot)
    p = P_RATED * (_power_curve(u) + 0.02 * torch.randn(n, N, generator=g))            # MW
    curtailed = torch.rand(n, N, generator=g) < 0.1                                    # single turbines
    valid = ~curtailed & (not farm_curtailed)
    x = torch.cat([((u0 - 9) / 3).expand(n, N).unsqueeze(-1),
                   wdir[:, None, :].expand(n, N, 2),
                   torch.zeros(n, N, 1)], -1)
    adj = ((down > 0) & (down < 25 * D) & (cross < 4 * D)).float()
    e = torch.stack([down / 10, cross / 4, adj], -1) * adj.unsqueeze(-1)
    y = torch.stack([p, valid.float()], -1)
    return (x.float(), e.float()), y.float()


class WakeMessagePassing(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.msg = nn.Sequential(nn.Linear(2 * h + 3, h), nn.SiLU(), nn.Linear(h, h))
        self.upd = nn.Sequential(nn.Linear(2 * h, h), nn.SiLU())

    def forward(self, h, e):
        B, N, H = h.shape
        hi = h[:, :, None, :].expand(B, N, N, H)
        hj = h[:, None, :, :].expand(B, N, N, H)
        m = self.msg(torch.cat([hi, hj, e], -1)) * e[..., 2:3]                          # only real edges
        agg = m.sum(2) / (e[..., 2].sum(2, keepdim=True) + 1.0)
        return h + self.upd(torch.cat([h, agg], -1))


class WakeGNN(nn.Module):
    def __init__(self, h, layers):
        super().__init__()
        self.enc = nn.Linear(4, h)
        self.mp = nn.ModuleList([WakeMessagePassing(h) for _ in range(layers)])
        self.dec = nn.Linear(h, 1)

    def forward(self, x, e):
        h = self.enc(x)
        for layer in self.mp:
            h = layer(h, e)
        return self.dec(h).squeeze(-1)


def masked_farm_sse(pred, y):
    p, valid = y[..., 0], y[..., 1]
    return (((pred - p) ** 2) * valid).sum(1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    rows, cols = [(4, 4), (4, 6), (6, 6)][seed % 3]
    h = [32, 24, 16][seed % 3]
    layers = [2, 3, 2][seed % 3]
    batch = [16, 12, 10][seed % 3]
    lr = [2e-4, 1.5e-4, 1e-4][seed % 3]
    steps = 150

    g = torch.Generator().manual_seed(3030 + seed)
    pos = _layout(g, rows, cols)
    # the loader walks through the SCADA archive; farm-wide curtailment orders (grid
    # congestion) fill whole batches with masked snapshots every ~20..30 steps
    first, every = [17, 23, 12][seed % 3], [23, 29, 19][seed % 3]
    batches = [_snapshot(g, pos, batch, i >= first and (i - first) % every == 0) for i in range(steps)]

    torch.manual_seed(seed)
    model = WakeGNN(h, layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=masked_farm_sse, batches=batches, steps=steps)
