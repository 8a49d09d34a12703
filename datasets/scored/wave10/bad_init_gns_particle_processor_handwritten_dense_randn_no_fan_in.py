"""Learned particle simulator in the Graph Network-based Simulator (GNS) style: an encoder embeds
each particle's recent velocity history and the relative displacement/distance of every neighbour
pair, a processor of 4 residual interaction-network blocks updates edge then node latents, and a
decoder predicts the (standardised) particle accelerations. The processor's edge/node MLPs were
written by hand with `nn.Parameter(torch.randn(fan_in, fan_out))` - the 1/sqrt(fan_in) scaling was
left out. Every handwritten layer multiplies the latent scale by ~sqrt(fan_in) (6-10x); with two
such layers per MLP and residual accumulation over 4 blocks, the latents reach ~1e7-1e9 by the last
block at step 0. The decoder output and loss are astronomically large, the SiLU units are deep in
their linear/zero regimes, and Adam's per-step parameter changes (~lr) are negligible against
weights of that scale, so the loss never comes down (or overflows). Fixed: the same layers
initialised with std 1/sqrt(fan_in) (LeCun/Kaiming-style)."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "processor.0.edge_mlp.0"
SOURCE = ("handwritten torch.randn weight without fan-in scaling in a GNS/Interaction-network "
          "processor (Sanchez-Gonzalez et al. 2020 GNS); activations grow geometrically with depth")

N_PART, HIST, LATENT = 16, 5, 32


class Dense(nn.Module):
    def __init__(self, fan_in, fan_out, fan_in_scaled):
        super().__init__()
        std = 1.0 / math.sqrt(fan_in) if fan_in_scaled else 1.0
        self.weight = nn.Parameter(torch.randn(fan_in, fan_out) * std)
        self.bias = nn.Parameter(torch.zeros(fan_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class InteractionBlock(nn.Module):
    def __init__(self, scaled):
        super().__init__()
        self.edge_mlp = nn.Sequential(Dense(3 * LATENT, LATENT, scaled), nn.SiLU(), Dense(LATENT, LATENT, scaled))
        self.node_mlp = nn.Sequential(Dense(2 * LATENT, LATENT, scaled), nn.SiLU(), Dense(LATENT, LATENT, scaled))

    def forward(self, v, e, adj):
        n = v.shape[1]
        vi = v[:, :, None].expand(-1, -1, n, -1)
        vj = v[:, None, :].expand(-1, n, -1, -1)
        e = e + self.edge_mlp(torch.cat([e, vi, vj], -1)) * adj[..., None]
        agg = e.sum(2)
        v = v + self.node_mlp(torch.cat([v, agg], -1))
        return v, e


class GNS(nn.Module):
    def __init__(self, scaled):
        super().__init__()
        self.node_enc = nn.Sequential(nn.Linear(2 * HIST, LATENT), nn.SiLU(), nn.Linear(LATENT, LATENT))
        self.edge_enc = nn.Sequential(nn.Linear(3, LATENT), nn.SiLU(), nn.Linear(LATENT, LATENT))
        self.processor = nn.ModuleList([InteractionBlock(scaled) for _ in range(4)])
        self.decoder = nn.Sequential(nn.Linear(LATENT, LATENT), nn.SiLU(), nn.Linear(LATENT, 2))

    def forward(self, vel_hist, pos, adj):
        rel = (pos[:, :, None] - pos[:, None, :]) / 0.3
        dist = (rel ** 2).sum(-1, keepdim=True).add(1e-12).sqrt()
        v = self.node_enc(vel_hist)
        e = self.edge_enc(torch.cat([rel, dist], -1)) * adj[..., None]
        for blk in self.processor:
            v, e = blk(v, e, adj)
        return self.decoder(v)


def simulate_batch(g, B, R=0.3):
    pos = torch.rand(B, N_PART, 2, generator=g)
    vel = torch.randn(B, N_PART, 2, generator=g) * 0.01
    hist = []
    dt = 1.0
    for t in range(HIST + 1):
        rel = pos[:, :, None] - pos[:, None, :]
        d = (rel ** 2).sum(-1).add(1e-9).sqrt()
        near = ((d < R) & (d > 0)).float()
        # soft repulsion + gravity + wall bounce (a toy SPH-like fluid)
        f = ((R - d).clamp(min=0) * near)[..., None] * rel / d[..., None] * 0.02
        acc = f.sum(2) + torch.tensor([0.0, -0.002])
        acc = acc + (0.05 - pos).clamp(min=0) * 0.05 - (pos - 0.95).clamp(min=0) * 0.05
        if t < HIST:
            vel = vel + acc * dt
            pos = pos + vel * dt
            hist.append(vel)
        else:
            target = acc
    rel = pos[:, :, None] - pos[:, None, :]
    d = (rel ** 2).sum(-1).add(1e-9).sqrt()
    adj = ((d < R) & (d > 0)).float()
    return (torch.cat(hist, -1), pos, adj), target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GNS(scaled=fixed)
    raw = [simulate_batch(g, 16) for _ in range(12)]
    vh = torch.cat([r[0][0] for r in raw]); acc = torch.cat([r[1] for r in raw])
    vmu, vsd, amu, asd = vh.mean((0, 1)), vh.std((0, 1)), acc.mean((0, 1)), acc.std((0, 1))
    data = [(((x[0] - vmu) / vsd, x[1], x[2]), (y - amu) / asd) for x, y in raw]
    steps = 100
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
