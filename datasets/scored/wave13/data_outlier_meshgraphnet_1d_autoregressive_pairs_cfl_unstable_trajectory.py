"""MeshGraphNet-style encode-process-decode GNN on a periodic 1-D mesh, trained
as a one-step (autoregressive) surrogate on snapshot pairs (u_t -> u_{t+dt})
harvested from viscous-Burgers trajectories produced by an explicit
finite-difference solver.

Mechanism: the data pipeline samples random initial conditions and runs an
explicit solver with a fixed time step.  One initial condition drawn from the
heavy tail of the amplitude distribution violates the CFL condition
(|u| dt / dx > 1); that trajectory grows exponentially and its late snapshots
overflow to inf/NaN.  Nobody checks the solver output, so snapshot pairs from
that trajectory sit in the otherwise clean training set.  Training is smooth
until the batch that contains such a pair: the non-finite node values enter
the edge features (u_j - u_i = inf - inf = NaN), the LayerNorms spread the NaN
over every latent channel, and the loss and all gradients are NaN.

ORIGIN: None -- the simulator network itself is healthy; a corrupt sample
arrives with one batch.

Fix: filter the dataset (drop trajectories whose solver output is non-finite /
CFL-violating), so the batch contains a valid pair instead.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("MeshGraphNets (Pfaff et al., ICLR 2021) / learned-simulator training on solver rollouts; "
          "issues 'loss becomes nan after N iterations' traced to diverged (CFL-violating) "
          "trajectories left in the generated dataset")


def mlp(d_in, d_out, hidden, layer_norm=True):
    layers = [nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out)]
    if layer_norm:
        layers.append(nn.LayerNorm(d_out))
    return nn.Sequential(*layers)


class ProcessorBlock(nn.Module):
    def __init__(self, latent, offsets):
        super().__init__()
        self.offsets = offsets
        self.edge_mlp = mlp(3 * latent, latent, latent)
        self.node_mlp = mlp(2 * latent, latent, latent)

    def forward(self, h, e):  # h: (B, N, L); e: (B, K, N, L), edge (i <- i + offset_k)
        nbrs = torch.stack([torch.roll(h, -o, dims=1) for o in self.offsets], dim=1)
        hi = h[:, None].expand_as(nbrs)
        e = e + self.edge_mlp(torch.cat([e, hi, nbrs], dim=-1))
        h = h + self.node_mlp(torch.cat([h, e.sum(dim=1)], dim=-1))
        return h, e


class MeshGraphNet1d(nn.Module):
    """Encode-process-decode (Pfaff et al.) on a periodic 1-D mesh."""
    def __init__(self, latent, steps, offsets=(-2, -1, 1, 2)):
        super().__init__()
        self.offsets = offsets
        self.node_encoder = mlp(1, latent, latent)
        self.edge_encoder = mlp(2, latent, latent)
        self.processor = nn.ModuleList([ProcessorBlock(latent, offsets) for _ in range(steps)])
        self.decoder = mlp(latent, 1, latent, layer_norm=False)

    def forward(self, u):  # u: (B, N)
        rel = torch.stack([torch.roll(u, -o, dims=1) - u for o in self.offsets], dim=1)
        off = torch.tensor(self.offsets, dtype=u.dtype).view(1, -1, 1).expand_as(rel) / 2
        e = self.edge_encoder(torch.stack([rel, off], dim=-1))
        h = self.node_encoder(u[..., None])
        for block in self.processor:
            h, e = block(h, e)
        return u + 0.1 * self.decoder(h).squeeze(-1)  # residual one-step update


def burgers_trajectories(u0, nu, dt, dx, n_snap, substeps):
    u, snaps = u0.clone(), [u0.clone()]
    with torch.no_grad():
        for _ in range(n_snap - 1):
            for _ in range(substeps):
                up, um = torch.roll(u, -1, dims=-1), torch.roll(u, 1, dims=-1)
                adv = torch.where(u > 0, u * (u - um), u * (up - u)) / dx  # first-order upwind
                u = u - dt * adv + nu * dt * (up - 2 * u + um) / dx ** 2
            snaps.append(u.clone())
    return torch.stack(snaps, dim=1)  # (traj, snap, N)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(latent=32, mp_steps=3, bs=16, lr=1e-3, bad_step=52),
        dict(latent=48, mp_steps=2, bs=12, lr=7e-4, bad_step=83),
        dict(latent=24, mp_steps=4, bs=24, lr=1.5e-3, bad_step=34),
    ][seed % 3]
    g = torch.Generator().manual_seed(4000 + seed)
    n, n_traj, n_snap, steps = 64, 48, 12, 110
    dx, dt, nu = 2 * math.pi / n, 0.01, 0.05
    x = torch.arange(n) * dx
    k = torch.arange(1, 5).float()
    amps = torch.randn(n_traj, 4, generator=g) / k
    phases = torch.rand(n_traj, 4, generator=g) * 2 * math.pi
    u0 = (amps[:, :, None] * torch.sin(k[None, :, None] * x + phases[:, :, None])).sum(1)
    u0 = u0 / u0.abs().amax(dim=1, keepdim=True) * (0.5 + 1.5 * torch.rand(n_traj, 1, generator=g))
    # heavy-tailed amplitude draw: trajectory 0 is the one the solver cannot handle at this dt
    u0[0] = u0[0] / u0[0].abs().max() * 30.0
    traj = burgers_trajectories(u0, nu, dt, dx, n_snap, substeps=10)
    good = list(range(1, n_traj))

    batches = []
    for step in range(steps):
        ti = torch.tensor(good)[torch.randint(0, len(good), (cfg["bs"],), generator=g)]
        si = torch.randint(0, n_snap - 1, (cfg["bs"],), generator=g)
        xin, yout = traj[ti, si].clone(), traj[ti, si + 1].clone()
        if step == cfg["bad_step"] and not fixed:
            # the unfiltered dataset also contains pairs from the diverged trajectory
            xin[0], yout[0] = traj[0, n_snap - 2], traj[0, n_snap - 1]
        batches.append((xin, yout))

    torch.manual_seed(seed)
    model = MeshGraphNet1d(cfg["latent"], cfg["mp_steps"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=1e-5)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
