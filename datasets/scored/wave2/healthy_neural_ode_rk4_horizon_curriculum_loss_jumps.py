"""Neural ODE (MLP vector field, fixed-step RK4 unrolled in autograd) learning the dynamics of a
damped nonlinear pendulum from trajectory segments, trained with the standard horizon
curriculum: first on short rollouts, then the rollout length is doubled twice during the run.
Each time the horizon grows, the per-step loss jumps up by several times (errors compound
over the longer rollout and the new tail of the trajectory is unseen), and gradients through
the longer unrolled RK4 chain are larger - it looks like a divergence in the loss curve. It is
not: the model keeps improving and by the end the long-horizon loss is far below the loss of
the very first short-horizon steps."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Neural ODEs (Chen et al. 2018) trained with a rollout-length curriculum (e.g. "
          "torchdiffeq examples/ode_demo.py uses short batch_time segments; multiple-shooting / "
          "curriculum practice in learned dynamics models)")


class ODEFunc(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, width),
                                 nn.Tanh(), nn.Linear(width, 2))

    def forward(self, z):
        return self.net(z)


class NeuralODE(nn.Module):
    def __init__(self, width, dt):
        super().__init__()
        self.func = ODEFunc(width)
        self.dt = dt

    def forward(self, z0, t_grid):
        z, out, h = z0, [], self.dt
        for _ in range(t_grid.shape[1]):
            k1 = self.func(z); k2 = self.func(z + h / 2 * k1)
            k3 = self.func(z + h / 2 * k2); k4 = self.func(z + h * k3)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            out.append(z)
        return torch.stack(out, 1)                    # B, T, 2


def pendulum(z0, n, dt):
    def f(z):
        return torch.stack([z[:, 1], -2.0 * torch.sin(z[:, 0]) - 0.15 * z[:, 1]], 1)
    z, out = z0, []
    sub = 5
    for _ in range(n):
        for _ in range(sub):
            h = dt / sub
            k1 = f(z); k2 = f(z + h / 2 * k1); k3 = f(z + h / 2 * k2); k4 = f(z + h * k3)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(z)
    return torch.stack(out, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12 + seed)
    width = [32, 48, 40][seed % 3]
    batch = [32, 24, 48][seed % 3]
    steps = [180, 200, 160][seed % 3]
    h0 = [6, 5, 6][seed % 3]
    switch = [[50, 110], [60, 130], [40, 100]][seed % 3]
    dt = 0.1

    n_pool = 512
    z0_pool = torch.stack([(torch.rand(n_pool, generator=g) * 2 - 1) * 2.0,
                           (torch.rand(n_pool, generator=g) * 2 - 1) * 1.5], 1)
    traj_pool = pendulum(z0_pool, 4 * h0, dt)
    batches = []
    for step in range(steps):
        H = h0 * (1 if step < switch[0] else 2 if step < switch[1] else 4)
        idx = torch.randint(0, n_pool, (batch,), generator=g)
        batches.append(((z0_pool[idx], torch.zeros(batch, H)), traj_pool[idx, :H]))

    model = NeuralODE(width, dt)
    opt = torch.optim.Adam(model.parameters(), lr=[1e-2, 8e-3, 1e-2][seed % 3])

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
