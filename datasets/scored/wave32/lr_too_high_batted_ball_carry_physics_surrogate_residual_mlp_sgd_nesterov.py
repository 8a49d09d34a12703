"""Surrogate of a batted-ball flight simulator: a residual MLP maps (exit velocity, launch angle,
spray angle, backspin, sidespin, air density, wind) to carry distance and hang time, trained on
synthetic simulator output (drag + Magnus ODE, here a smooth closed-form stand-in) with MSE and
SGD-Nesterov.

Mechanism: the learning rate (0.2-0.3 with Nesterov momentum 0.9) was carried over from a
linear-regression baseline.  The effective step is far beyond 2/lambda_max of the loss curvature
of the deeper residual net: the first updates overshoot, the residual branches amplify the
error, the weights oscillate with growing amplitude and the loss overflows to inf/NaN within a
few dozen steps.

ORIGIN: None - an optimiser setting, not a module; every layer receives oversized updates.

Fix: lr 0.02 (same model, optimiser type, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: SGD learning rate above the stability limit 2/lambda_max makes the "
          "loss diverge (LeCun et al. 'Efficient BackProp'; Goodfellow et al. Deep Learning "
          "ch. 8; countless 'loss goes to nan after a few iterations, lowering lr fixed it').")


class ResBlock(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.fc1 = nn.Linear(w, w)
        self.fc2 = nn.Linear(w, w)

    def forward(self, h):
        return h + self.fc2(torch.relu(self.fc1(h)))


class FlightSurrogate(nn.Module):
    def __init__(self, d_in, width, n_blocks):
        super().__init__()
        self.stem = nn.Linear(d_in, width)
        self.blocks = nn.Sequential(*[ResBlock(width) for _ in range(n_blocks)])
        self.out = nn.Linear(width, 2)

    def forward(self, x):
        return self.out(self.blocks(torch.relu(self.stem(x))))


def _simulate(g, n):
    ev = 35 + 15 * torch.rand(n, generator=g)            # m/s
    la = torch.deg2rad(-10 + 50 * torch.rand(n, generator=g))
    spray = torch.deg2rad(-45 + 90 * torch.rand(n, generator=g))
    back = 1000 + 2500 * torch.rand(n, generator=g)       # rpm
    side = -800 + 1600 * torch.rand(n, generator=g)
    rho = 1.0 + 0.25 * torch.rand(n, generator=g)
    wind = -5 + 10 * torch.rand(n, generator=g)
    lift = 1 + 0.00012 * back
    drag = 0.0035 * rho * ev
    carry = ev ** 2 * torch.sin(2 * la).clamp(min=0.02) / 9.81 * lift / (1 + drag) + 3 * wind * torch.cos(spray)
    carry = carry - 0.004 * side.abs()
    hang = 2 * ev * torch.sin(la).clamp(min=0.02) / 9.81 * lift ** 0.5
    x = torch.stack([ev, la, spray, back, side, rho, wind], 1)
    y = torch.stack([carry, hang], 1)
    x = (x - x.mean(0)) / x.std(0)
    y = (y - y.mean(0)) / y.std(0)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    width = [64, 96, 128][seed % 3]
    n_blocks = [3, 2, 4][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = 0.02 if fixed else [0.25, 0.3, 0.2][seed % 3]
    steps = 120
    model = FlightSurrogate(7, width, n_blocks)
    x, y = _simulate(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
