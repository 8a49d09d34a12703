"""Learned particle simulator in the style of GNS (Sanchez-Gonzalez et al. 2020): node features are
the particle's recent positions and velocities and the model predicts the next acceleration. The
pipeline forgot the dataset statistics: positions are fed in raw millimetres (~1e3-1e4) and the
acceleration targets in mm/s^2 (~1e2-1e3) instead of being standardised. The loss starts at ~1e5 and
SGD with a normal learning rate blows up to inf/NaN within a few steps. Fix: standardise inputs and
targets with the dataset mean/std (the recipe in the GNS paper)."""
import torch, torch.nn as nn
CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = "GNS / 'Learning to Simulate' (Sanchez-Gonzalez et al. 2020): normalise inputs and targets by dataset statistics"
class GNS(nn.Module):
    def __init__(s, d, h, steps_mp):
        super().__init__(); s.encoder = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h))
        s.edge = nn.Linear(2 * h, h); s.node = nn.Linear(2 * h, h); s.decoder = nn.Linear(h, 2); s.k = steps_mp
    def forward(s, x, adj):
        h = s.encoder(x)
        for _ in range(s.k):
            m = torch.relu(s.edge(torch.cat([h, adj @ h], -1)))
            h = h + torch.relu(s.node(torch.cat([h, m], -1)))
        return s.decoder(h)
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    N, h, k = 40 + 20 * seed, 32, 2 + seed
    steps = 100
    model = GNS(6, h, k)
    raw = []
    for _ in range(steps):
        p = torch.rand(N, 2, generator=g) * 8000.0 + 500.0  # mm
        v1 = torch.randn(N, 2, generator=g) * 30.0; v0 = v1 + torch.randn(N, 2, generator=g) * 5.0
        d = p[:, None, :] - p[None, :, :]; dist = d.norm(dim=-1)
        adj = (dist < 1500.0).float(); adj = adj / adj.sum(1, keepdim=True)
        acc = -0.05 * (p - 4500.0) - 2.0 * v1 + 3.0 * (v1 - v0) + 20 * torch.randn(N, 2, generator=g)
        raw.append((torch.cat([p, v1, v0], -1), adj, acc))
    X = torch.cat([r[0] for r in raw]); Y = torch.cat([r[2] for r in raw])
    mx, sx, my, sy = X.mean(0), X.std(0), Y.mean(0), Y.std(0)
    batches = []
    for x, adj, y in raw:
        if fixed: x, y = (x - mx) / sx, (y - my) / sy
        batches.append(((x, adj), y))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3 * (1 + seed), momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
