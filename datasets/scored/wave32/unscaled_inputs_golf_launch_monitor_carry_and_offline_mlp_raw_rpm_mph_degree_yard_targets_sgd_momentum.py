"""Golf club-fitting surrogate: predict carry distance and offline deviation (yards) from raw
launch-monitor readings - ball speed (mph, 90-180), launch angle (deg), backspin (rpm,
1500-9000), side spin (rpm, +-1500), spin axis (deg), club speed (mph) and altitude (ft) - with
a 2-3 layer ReLU MLP, MSE, SGD with momentum.

Mechanism: the CSV columns go straight into the network.  Backspin and altitude are in the
thousands, so the first layer's pre-activations are ~1e3-1e4 and the targets (carry ~120-300
yd) are two orders of magnitude above the unit-scale outputs: the loss is ~1e4-1e5 from step 0
and its gradients, multiplied by the raw rpm/ft inputs, are ~1e6-1e8.  The first SGD steps
overshoot and the loss overflows to inf/NaN within a few steps.

ORIGIN: ``net.0`` - the first Linear, where the raw-unit features enter and produce the huge
pre-activations and gradients.

Fix: standardise every input column and the targets (z-scores computed on the data), same model,
optimiser, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Known pattern: feeding raw launch-monitor / sensor units (rpm, ft, mph) into an MLP "
          "without standardisation diverges ('loss is nan/inf from the first epoch, normalise "
          "your features' - CS231n data preprocessing; scikit-learn MLP docs: 'sensitive to "
          "feature scaling').")


class CarryMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 2))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def _data(g, n):
    club = 70 + 50 * torch.rand(n, generator=g)                      # mph
    smash = 1.3 + 0.18 * torch.rand(n, generator=g)
    ball = club * smash
    launch = 8 + 20 * torch.rand(n, generator=g)                     # deg
    back = 1500 + 7500 * torch.rand(n, generator=g) * (1.3 - smash) / 0.3
    side = -1500 + 3000 * torch.rand(n, generator=g)
    axis = torch.rad2deg(torch.atan2(side, back))
    alt = 5000 * torch.rand(n, generator=g)                          # ft
    opt_spin = 2500 + 100 * (20 - launch)
    carry = 1.55 * ball * (1 - 0.00004 * (back - opt_spin).abs()) * torch.sin(torch.deg2rad(2 * launch)) ** 0.35
    carry = carry * (1 + alt / 50000) + 2 * torch.randn(n, generator=g)
    offline = carry * torch.sin(torch.deg2rad(axis)) * 0.8 + torch.randn(n, generator=g)
    x = torch.stack([ball, launch, back, side, axis, club, alt], 1)
    y = torch.stack([carry, offline], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(14000 + seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150
    model = CarryMLP(7, width, depth)
    x, y = _data(g, bs * steps)
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
        y = (y - y.mean(0)) / y.std(0)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
