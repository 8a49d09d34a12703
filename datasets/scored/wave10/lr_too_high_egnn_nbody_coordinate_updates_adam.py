"""E(n)-equivariant graph network (EGNN, Satorras et al. 2021) on the charged-particle N-body task:
5 particles with +-1 charges, input positions/velocities, predict positions after a fixed rollout
of a Coulomb simulator. Each EGCL layer builds edge messages from |x_i-x_j|^2 and charges, updates
coordinates x_i += mean_j (x_i - x_j) * phi_x(m_ij) and velocities feed in through phi_v. The paper
trains with Adam lr 5e-4; this run uses lr 2e-2 copied from a GNN node-classification config. The
coordinate branch is multiplicative in the relative positions, so the oversized Adam steps make
phi_x jump, coordinates overshoot, |x_i-x_j|^2 entering the next layer grows, and the position
error blows up instead of decreasing. Fixed: lr 5e-4 as in the paper."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("EGNN N-body experiment (Satorras, Hoogeboom, Welling 2021, lr 5e-4); known instability of "
          "EGNN coordinate updates with large learning rates (egnn-pytorch issues)")

N_P = 5


class EGCL(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.phi_e = nn.Sequential(nn.Linear(2 * hidden + 2, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.phi_x = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))
        self.phi_v = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))
        self.phi_h = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))

    def forward(self, h, x, v, qq):
        n = h.shape[1]
        rel = x[:, :, None, :] - x[:, None, :, :]                     # [B,N,N,3]
        d2 = (rel ** 2).sum(-1, keepdim=True)
        hi = h[:, :, None, :].expand(-1, -1, n, -1)
        hj = h[:, None, :, :].expand(-1, n, -1, -1)
        m = self.phi_e(torch.cat([hi, hj, d2, qq], -1))
        offdiag = (1 - torch.eye(n))[None, :, :, None]
        m = m * offdiag
        v = self.phi_v(h) * v + (rel * self.phi_x(m) * offdiag).sum(2) / (n - 1)
        x = x + v
        h = h + self.phi_h(torch.cat([h, m.sum(2)], -1))
        return h, x, v


class EGNN(nn.Module):
    def __init__(self, hidden=32, layers=4):
        super().__init__()
        self.embed = nn.Linear(1, hidden)
        self.layers = nn.ModuleList([EGCL(hidden) for _ in range(layers)])

    def forward(self, x, v, charge):
        h = self.embed((v ** 2).sum(-1, keepdim=True).sqrt())
        qq = (charge[:, :, None] * charge[:, None, :])[..., None]
        for layer in self.layers:
            h, x, v = layer(h, x, v, qq)
        return x


def simulate(x, v, q, steps=100, dt=0.01):
    for _ in range(steps):
        rel = x[:, :, None] - x[:, None, :]
        d = (rel ** 2).sum(-1, keepdim=True).add(1e-2).sqrt()
        f = (q[:, :, None, None] * q[:, None, :, None] * rel / d ** 3).sum(2)
        v = v + dt * f.clamp(-20, 20)
        x = x + dt * v
    return x


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = EGNN()
    data = []
    for _ in range(25):
        x = torch.randn(50, N_P, 3, generator=g)
        v = torch.randn(50, N_P, 3, generator=g) * 0.5
        q = torch.randint(0, 2, (50, N_P), generator=g).float() * 2 - 1
        data.append(((x, v, q), simulate(x, v, q)))
    steps = 150
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=5e-4 if fixed else 2e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
