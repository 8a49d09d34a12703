"""Terminal-airspace conflict-risk predictor: hand-written message-passing GNN, tanh updates.

Mechanism: every graph is a snapshot of a terminal manoeuvring area; nodes are aircraft
(standardised relative position, altitude, ground speed, heading sin/cos, vertical rate) and an
edge joins each pair within a 20 NM / 4000 ft proximity cylinder. During arrival banks the
graphs are dense (30-60 neighbours per node). The per-aircraft target is a conflict-risk flag (vertical rate, offset from the
local traffic layer and closure on the local flow; BCE with logits). The messages are
*summed* over neighbours (GIN-style ``adj @ W h``) and passed through ``tanh``. With 30-60
neighbours the summed pre-activations are ~6-8x larger than a single message, so nearly every
tanh unit sits at +-1 for every aircraft: tanh'(z) ~ 0, gradients into the message weights
vanish and the per-aircraft features carry no information beyond the graph density. The BCE
stays at its initial level - a stall, no NaN.

ORIGIN: ``mp.0.act`` - the tanh of the first message-passing layer is where the units
saturate first; the next layer only receives constant +-1 features.

Fix: mean instead of sum aggregation (divide by the node degree), keeping the pre-activations
of the tanh in its linear range; everything else is unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "mp.0.act"
SOURCE = ("Known pattern: sum aggregation over high-degree nodes saturating bounded activations "
          "(Xu et al. 2019 GIN discussion of aggregator scale; Hamilton 2020 GRL book Sec. 5.2 "
          "'neighbourhood normalisation'); GNN-based air-traffic conflict detection on "
          "proximity graphs.")


class MPTanh(nn.Module):
    def __init__(self, d_in, d_out, mean_agg):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_msg = nn.Linear(d_in, d_out, bias=False)
        self.act = nn.Tanh()
        self.mean_agg = mean_agg

    def forward(self, h, adj):
        m = adj @ self.lin_msg(h)
        if self.mean_agg:
            m = m / adj.sum(-1, keepdim=True).clamp_min(1)
        return self.act(self.lin_self(h) + m)


class ConflictGNN(nn.Module):
    def __init__(self, d_in, width, depth, mean_agg):
        super().__init__()
        dims = [d_in] + [width] * depth
        self.mp = nn.ModuleList(MPTanh(a, b, mean_agg) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(width, 1)

    def forward(self, x, adj):
        h = x
        for layer in self.mp:
            h = layer(h, adj)
        return self.head(h).squeeze(-1)


def _traffic(g, b, n):
    pos = torch.randn(b, n, 2, generator=g) * 0.6
    alt = torch.randn(b, n, 1, generator=g) * 0.5
    hdg = torch.rand(b, n, generator=g) * 6.2832
    vel = torch.stack([torch.cos(hdg), torch.sin(hdg)], -1) * (0.8 + 0.4 * torch.rand(b, n, 1, generator=g))
    vs = torch.randn(b, n, 1, generator=g) * 0.5
    d = torch.cdist(pos, pos)
    dz = (alt - alt.transpose(1, 2)).abs()
    adj = ((d < 1.2) & (dz < 0.8)).float() * (1 - torch.eye(n))
    # conflict-risk proxy: vertical rate towards the local traffic layer (climbing into the
    # traffic above / descending into the traffic below) plus closure on the local flow
    deg = adj.sum(-1, keepdim=True).clamp_min(1)
    layer_alt = adj @ alt / deg
    flow = adj @ vel / deg
    closure = -(vel * flow).sum(-1, keepdim=True)
    score = (vs + (layer_alt - alt) + 0.5 * closure).squeeze(-1)
    y = (score > score.median()).float()
    x = torch.cat([pos, alt, vel, vs, torch.cos(hdg)[..., None], torch.sin(hdg)[..., None]], -1)
    return (x, adj), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4040 + seed)
    n = [64, 80, 96][seed % 3]
    width = [64, 96, 48][seed % 3]
    depth = [2, 2, 3][seed % 3]
    lr = [0.2, 0.15, 0.25][seed % 3]
    bs = [4, 3, 2][seed % 3]
    steps = 100
    model = ConflictGNN(8, width, depth, mean_agg=fixed)
    batches = [_traffic(g, bs, n) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
