"""Taxi trip-duration regressor (NYC-TLC style): a deep ReLU MLP over standardised trip
features (haversine distance, pickup hour sin/cos, weekday, zone centroid lat/lon, passenger
count, ...) predicting standardised log trip duration with MSE and plain SGD.

Mechanism: every Linear is initialised with ``nn.init.normal_(w, 0.0, 1.0)``, the
``tf.random_normal([n_in, n_out])`` default (stddev=1.0) carried over from a TF1 tutorial port.
With fan-in 48-128 each ReLU layer multiplies the activation scale by about sqrt(fan_in / 2)
(~5-8x), so after 6-8 layers the prediction is ~1e5-1e7 at step 0; the MSE gradient of the last
layers is of the same enormous order and the first SGD step throws the weights further out, so
the loss overflows to inf/NaN within a few steps.

ORIGIN = "net.0": the geometric growth starts at the first Linear (its std-1 weights already
multiply the unit-variance features by sqrt(n_features)) and every later layer compounds it;
no later layer is the start.

Fix: Kaiming (He) normal init for the ReLU layers (fan_in, gain sqrt(2)), zero biases; the
last Linear xavier. Same data, depth, optimiser and lr.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("TF1 tutorials initialising dense layers with tf.random_normal (stddev=1.0) and the "
          "exploding-activation analysis of He et al. 2015 (Delving Deep into Rectifiers, "
          "Sec. 2.2); NYC taxi trip duration Kaggle MLP ports")


def _data(g, n, d):
    x = torch.randn(n, d, generator=g)
    # log-duration: mostly distance, rush-hour bump, zone effects
    dist = x[:, 0]
    hour_s, hour_c = x[:, 1], x[:, 2]
    y = 0.8 * dist + 0.3 * torch.tanh(hour_s + 0.5 * hour_c) + 0.2 * x[:, 3] * x[:, 4]
    y = y + 0.1 * x[:, 5:].sum(1) / math.sqrt(d - 5) + 0.1 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    return x, y.unsqueeze(1)


class TripDurationMLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [6, 7, 8][seed % 3]
    width = [64, 96, 128][seed % 3]
    bs = [64, 96, 128][(seed + 1) % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    steps = 150
    d_in = 12
    torch.manual_seed(seed)
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = TripDurationMLP(layers)
    for m in model.net:
        if isinstance(m, nn.Linear):
            if fixed:
                if m.out_features == 1:
                    nn.init.xavier_normal_(m.weight)
                else:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)   # tf.random_normal default stddev
            nn.init.zeros_(m.bias)
    x, y = _data(g, steps * bs, d_in)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
