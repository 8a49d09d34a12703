"""Behaviour cloning of a constrained MPC controller for a planar double-integrator (cart with two
axes): an MLP policy takes the (position, velocity) state and the reference waypoint and
regresses the MPC's first control move. The demonstrations were generated offline by calling a
QP solver at sampled states; for a handful of states near the constraint boundary the solver
returned status 'infeasible' and the logging script stored its solution vector anyway, which for
that solver is NaN. The training stream is otherwise clean. When the shuffled batch holding
those rows arrives (step 70) the MSE is NaN, AdamW writes NaN into every weight it touches and
every later loss is NaN. The fixed run drops rows whose logged action is non-finite (the solver-
status filter the logging script should have had)."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Approximate / explicit MPC by imitation (e.g. Karg & Lucia 2020, 'Efficient "
          "representation and approximation of MPC laws via deep learning'); recurring "
          "'NaN after N iterations' reports traced to infeasible solver outputs in the dataset")

U_MAX = 1.0


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.state_enc = nn.Linear(4, 64)
        self.ref_enc = nn.Linear(2, 64)
        self.trunk = nn.Sequential(nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))

    def forward(self, state, ref):
        return self.trunk(self.state_enc(state) + self.ref_enc(ref))


def teacher(state, ref):
    # saturated linear-quadratic feedback around the reference (stands in for the MPC law)
    pos, vel = state[:, :2], state[:, 2:]
    u = -1.8 * (pos - ref) - 2.2 * vel
    return U_MAX * torch.tanh(u / U_MAX)


def make_batch(g, n):
    state = torch.randn(n, 4, generator=g) * torch.tensor([1.0, 1.0, 0.6, 0.6])
    ref = torch.rand(n, 2, generator=g) * 2 - 1
    return state, ref, teacher(state, ref)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Policy()
    steps, bad_step = 150, 70
    raw = [make_batch(g, 64) for _ in range(steps)]
    s, r, u = raw[bad_step]
    u = u.clone()
    u[[5, 17, 40]] = float("nan")     # infeasible QP: solution vector is NaN
    raw[bad_step] = (s, r, u)
    batches = []
    for s, r, u in raw:
        if fixed:
            ok = torch.isfinite(u).all(dim=1)
            s, r, u = s[ok], r[ok], u[ok]
        batches.append(((s, r), u))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
