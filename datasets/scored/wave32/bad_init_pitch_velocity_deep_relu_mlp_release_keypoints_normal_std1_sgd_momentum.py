"""Pitch velocity from release-frame keypoint features with a deep ReLU MLP, weights drawn N(0, 1).

Mechanism: the practitioner writes a custom ``init_weights`` that calls
``nn.init.normal_(w, 0.0, 1.0)`` on every Linear (a pattern copied from numpy tutorials where
std=1 is the default).  With fan-in 24..160 every ReLU layer multiplies the activation scale by
about sqrt(fan_in / 2) ~ 7-9, so after 8-10 layers the prediction is ~1e7-1e9 at step 0, the MSE
is ~1e15+, and the first SGD step pushes the weights to inf/NaN: the loss becomes non-finite.

ORIGIN: ``net.0`` - every Linear has the bad init, but the geometric blow-up starts at the first
layer (it already amplifies the standardised inputs by ~sqrt(fan_in)), and every later layer
only compounds what it receives.

Fix: Kaiming-normal (fan_in, ReLU gain) initialisation, everything else unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Known pattern: N(0,1) weight init in deep ReLU nets makes activations explode "
          "geometrically with depth (He et al. 2015, 'Delving Deep into Rectifiers'; many forum "
          "threads 'loss is inf after first step, custom init normal_(0,1)').")


class PitchVelocityMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _data(g, n, d_in):
    # 12 keypoints (x, y) relative to the pelvis at ball release, standardised
    x = torch.randn(n, d_in, generator=g)
    w1 = torch.randn(d_in, 16, generator=g) / d_in ** 0.5
    w2 = torch.randn(16, generator=g) / 4.0
    y = torch.tanh(x @ w1) @ w2 * 3.0 + 0.1 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [8, 10, 9][seed % 3]
    width = [128, 96, 160][seed % 3]
    lr = [0.004, 0.002, 0.003][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 120
    d_in = 24
    model = PitchVelocityMLP(d_in, width, depth)

    def init_weights(m):
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)

    model.apply(init_weights)
    x, y = _data(g, bs * steps, d_in)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
