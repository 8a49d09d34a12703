"""Inductive kriging GNN (IGNNK-style) for traffic speed with a learnable distance edge gate.

Mechanism: speeds at unobserved (masked) road sensors are reconstructed from their
neighbours. Every road-graph edge is weighted by a learnable soft-cutoff gate
g_ij = sigmoid((r0 - d_ij) / s), with r0 = 2 and s = 1 chosen for distances in km. The
edge list from the road network (OSM / PeMS metadata) stores distances in metres
(100-1500), so every pre-activation is between -100 and -1500: sigmoid returns exactly 0
in float32 and its derivative is exactly 0. All messages are multiplied by 0, the masked
sensors (whose own input is zeroed) see nothing of their neighbours, and the gate
parameters r0 and s receive a zero gradient, so the gates can never reopen. The
reconstruction loss stays at the variance of the target for the whole run.

ORIGIN: `edge_gate.act`, the sigmoid that produces the edge gates, is where the units
pin at 0 and the gradient is cut.

Fix: feed the gate the pre-activation scale it was designed for (distances divided by
1000, i.e. in km); the gates start around sigmoid(1.5) and neighbours pass messages.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "edge_gate.act"
SOURCE = ("IGNNK (Wu et al., AAAI 2021) inductive kriging on PeMS/METR-LA road graphs; soft "
          "distance cutoff gate sigmoid((r0-d)/s) initialised for km while edge distances are in metres")


class DistanceGate(nn.Module):
    def __init__(self, r0=2.0, s=1.0):
        super().__init__()
        self.r0 = nn.Parameter(torch.tensor(r0))
        self.log_s = nn.Parameter(torch.tensor(math.log(s)))
        self.act = nn.Sigmoid()

    def forward(self, dist):
        return self.act((self.r0 - dist) / self.log_s.exp())


class KrigingGNN(nn.Module):
    def __init__(self, adj, dist, T, H, n_layers, dist_scale):
        super().__init__()
        self.register_buffer("adj", adj)
        self.register_buffer("dist", dist * dist_scale)
        self.edge_gate = DistanceGate()
        self.inp = nn.Linear(T + 1, H)
        self.convs = nn.ModuleList(nn.Linear(H, H) for _ in range(n_layers))
        self.acts = nn.ModuleList(nn.ReLU() for _ in range(n_layers))
        self.out = nn.Linear(H, T)

    def forward(self, x, obs_mask):
        # x: (B, N, T) speeds with unobserved sensors zeroed; obs_mask: (B, N)
        h = self.inp(torch.cat([x, obs_mask.unsqueeze(-1)], -1))
        w = self.adj * self.edge_gate(self.dist)
        w = w / self.adj.sum(1, keepdim=True).clamp_min(1.0)
        for conv, act in zip(self.convs, self.acts):
            h = h + act(conv(torch.einsum("ij,bjh->bih", w, h)))
        return self.out(h)


def masked_mse(out, target):
    y, eval_mask = target
    m = eval_mask.unsqueeze(-1).expand_as(y)
    return ((out - y) ** 2)[m.bool()].mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    N = [40, 30, 50][seed % 3]
    T = 12
    H = [32, 48, 24][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    bs = [16, 8, 12][seed % 3]
    steps = [150, 120, 160][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    # sensor positions in metres on a ~4 km corridor network, 5-NN road graph
    pos = torch.rand(N, 2, generator=g) * torch.tensor([4000.0, 1500.0])
    d = torch.cdist(pos, pos)
    knn = d.topk(6, largest=False).indices[:, 1:]
    adj = torch.zeros(N, N)
    adj.scatter_(1, knn, 1.0)
    adj = ((adj + adj.t()) > 0).float()
    dist = d * adj  # metres, as stored in the road-network edge list

    # spatially smooth speed field: a few travelling congestion waves + noise
    def window():
        t0 = torch.rand(1, generator=g) * 100
        ts = t0 + torch.arange(T).float()
        k = torch.randn(4, 2, generator=g) / 1500.0
        ph = torch.rand(4, generator=g) * 6.28
        amp = torch.randn(4, generator=g)
        field = (amp[:, None, None] * torch.sin(pos @ k.t()).t()[:, :, None]
                 * torch.cos(0.3 * ts[None, None, :] + ph[:, None, None]))
        v = field.sum(0) + 0.1 * torch.randn(N, T, generator=g)
        return v

    batches = []
    for _ in range(steps):
        v = torch.stack([window() for _ in range(bs)])  # (B, N, T)
        v = (v - v.mean()) / v.std()
        obs = (torch.rand(bs, N, generator=g) > 0.3).float()
        x = v * obs.unsqueeze(-1)
        batches.append(((x, obs), (v, 1.0 - obs)))

    model = KrigingGNN(adj, dist, T, H, n_layers, dist_scale=1e-3 if fixed else 1.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=masked_mse, batches=batches, steps=steps)
