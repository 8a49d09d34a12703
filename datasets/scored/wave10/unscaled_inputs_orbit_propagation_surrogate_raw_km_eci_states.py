"""Neural surrogate for orbit propagation: an MLP takes a satellite's ECI state at epoch - position in
km (|r| ~ 6800-7600 km), velocity in km/s - plus the propagation interval in seconds (60-1500 s) and
predicts the ECI position at epoch+dt, trained with MSE against an analytic two-body (circular-orbit)
propagator. The features and targets are fed in raw SI-ish units straight from the ephemeris
table: inputs of size ~7000 and ~1000 hit the first layer, and the targets are thousands of km, so
the first MSE is ~1e7 km^2. With Nesterov SGD at a learning rate that is ordinary for
standardised data, the gradients (~input scale x error scale ~1e7) make the first updates enormous,
the weights blow up and the loss overflows to inf/NaN within a few steps. Fixed: standardise inputs and targets (per-feature mean/std from the
training set), training and reporting the MSE in standardised units."""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("unnormalised physical units (km, s) fed to an MLP orbit/ephemeris surrogate; 'standardise "
          "inputs and targets' (LeCun et al. Efficient BackProp; cs231n data preprocessing)")

MU_EARTH = 398600.4418  # km^3/s^2


def sample_states(g, N):
    radius = 6778.0 + 800.0 * torch.rand(N, generator=g)
    inc = torch.rand(N, generator=g) * math.pi
    raan = torch.rand(N, generator=g) * 2 * math.pi
    phase = torch.rand(N, generator=g) * 2 * math.pi
    dt = 60 + 1440 * torch.rand(N, generator=g)
    n = torch.sqrt(MU_EARTH / radius ** 3)
    e1 = torch.stack([torch.cos(raan), torch.sin(raan), torch.zeros(N)], 1)
    e2 = torch.stack([-torch.sin(raan) * torch.cos(inc), torch.cos(raan) * torch.cos(inc), torch.sin(inc)], 1)
    def pos(ang):
        return radius[:, None] * (torch.cos(ang)[:, None] * e1 + torch.sin(ang)[:, None] * e2)
    r0 = pos(phase)
    v0 = (radius * n)[:, None] * (-torch.sin(phase)[:, None] * e1 + torch.cos(phase)[:, None] * e2)
    r1 = pos(phase + n * dt)
    return torch.cat([r0, v0, dt[:, None]], 1), r1


class OrbitSurrogate(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(7, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, 3))

    def forward(self, state_dt):
        return self.net(state_dt)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = OrbitSurrogate()
    X, Y = sample_states(g, 8192)
    if fixed:
        X = (X - X.mean(0)) / X.std(0)
        Y = (Y - Y.mean(0)) / Y.std(0)
    steps, B = 200, 256
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, X.shape[0], (B,), generator=g)
        batches.append((X[idx], Y[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
