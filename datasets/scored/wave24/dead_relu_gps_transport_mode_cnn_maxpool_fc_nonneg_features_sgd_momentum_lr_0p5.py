"""Transport-mode detection from GPS trajectories (GeoLife-style, Dabiri & Heaslip 2018): each
trajectory segment is 128 GPS points turned into point-level motion channels -- speed (m/s),
|acceleration|, |jerk| and |bearing rate| -- fed to a 1-D CNN (conv-ReLU stack, global
max-pool, ReLU FC) that classifies {walk, bike, bus, car, train}; class-balanced sampling,
cross-entropy, SGD with momentum 0.9.

Mechanism: the point features are non-negative and not centred (speeds 1-30 m/s), the
global max-pool makes the FC input a vector of large positive numbers, and the practitioner
used a large SGD rate (lr 0.4-0.6 with momentum, taken from a linear-scaling table for a BN
ResNet: 'the CNN trains too slowly otherwise'). In the first few steps each FC unit's update
is -lr * delta * h with h >= 0 large, i.e. one big coherent shift of its pre-activation; most
units overshoot to negative on every segment, and the convs under them, now receiving little
or sign-flipping gradient with the same huge step, die next. Within ~10 steps nearly all
ReLUs output exactly 0, no gradient reaches the convs or the FC again, and the cross-entropy
sits at ln 5 (balanced classes) for the rest of the run -- a stall, no NaN.

ORIGIN = "fc.0": the Linear after the max-pool takes the largest coherent update (its inputs
are all positive and large) and its ReLU (fc.1) is the first to go dead past its init share;
the conv ReLUs die a few steps later once the gradient they receive through it is gone or
erratic.

Fix: lower the learning rate to 0.005 (the rate this BN-free CNN tolerates); model, features, momentum and steps unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "fc.0"
SOURCE = ("Dabiri & Heaslip 2018, 'Inferring transportation modes from GPS trajectories using "
          "a convolutional neural network' (GeoLife, point-level speed/acc/jerk/bearing-rate "
          "channels); CS231n dying-ReLU note: a large update can leave units never active")

# (mean speed m/s, speed var, accel scale, bearing-rate scale, stop prob)
MODES = [(1.4, 0.4, 0.3, 20.0, 0.05), (4.5, 1.0, 0.6, 10.0, 0.05), (8.0, 3.5, 1.2, 4.0, 0.25),
         (13.0, 4.0, 1.5, 5.0, 0.1), (22.0, 3.0, 0.6, 1.0, 0.08)]


def _segments(g, n, T=128):
    y = torch.randint(0, 5, (n,), generator=g)
    P = torch.tensor(MODES)[y]
    base = P[:, 0:1] + P[:, 1:2] * torch.randn(n, T, generator=g).cumsum(1) / math.sqrt(T)
    stops = (torch.rand(n, T, generator=g) < P[:, 4:5]).float()
    stops = torch.nn.functional.max_pool1d(stops.unsqueeze(1), 9, 1, 4).squeeze(1)
    speed = torch.relu(base * (1 - stops) + 0.3 * torch.randn(n, T, generator=g))
    acc = torch.diff(speed, dim=1, prepend=speed[:, :1]) + P[:, 2:3] * 0.3 * torch.randn(n, T, generator=g)
    jerk = torch.diff(acc, dim=1, prepend=acc[:, :1])
    brate = P[:, 3:4] * torch.rand(n, T, generator=g) ** 2
    x = torch.stack([speed, acc.abs(), jerk.abs(), brate], 1)
    return x, y


class ModeCNN(nn.Module):
    def __init__(self, ch, depth, fc):
        super().__init__()
        layers, c = [], 4
        for _ in range(depth):
            layers += [nn.Conv1d(c, ch, 5, padding=2), nn.ReLU()]
            c = ch
        self.conv = nn.Sequential(*layers)
        self.fc = nn.Sequential(nn.Linear(ch, fc), nn.ReLU(), nn.Linear(fc, 5))

    def forward(self, x):
        return self.fc(self.conv(x).amax(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(5000 + seed)
    ch = [32, 48, 24][seed % 3]
    depth = [2, 3, 2][seed % 3]
    fc = [64, 96, 48][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr_bad = [0.4, 0.5, 0.6][seed % 3]
    steps = 120
    torch.manual_seed(seed)
    model = ModeCNN(ch, depth, fc)
    x, y = _segments(g, steps * bs)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.005 if fixed else lr_bad, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
