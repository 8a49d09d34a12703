"""Congestion-control throughput model (the supervised "environment model" of an Aurora-style
learned CC agent): from a window of per-monitor-interval telemetry -- send-rate ratio, latency
ratio, latency gradient magnitude, loss rate, ack rate, all non-negative -- a ReLU MLP
regresses the standardised goodput of the next interval (Huber loss, Adam).

Mechanism: the lr (0.1-0.25) was copied from a config tuned for a normalised LeakyReLU
policy net.  Because every input feature is non-negative, the gradient of a hidden unit's
incoming weights has the same sign for all of them, and Adam moves each of them by ~lr per step: in a few steps the units whose gradient says
"decrease" have all their weights and the bias pushed so far down that the pre-activation is
negative for every possible input.  Such a ReLU outputs 0 and gets 0 gradient forever; within
~10 steps most of the first layer is dead, the survivors cannot carry the signal and the loss
stays at the level of predicting the mean.  No NaN.

ORIGIN: ``net.0`` -- the first Linear (with its ReLU) is where the units die; every later layer
only loses its input.

Fix: lr = 1e-3 (with which no unit is driven off the whole input range); same model, data,
steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.0"
SOURCE = ("Aurora (Jay et al., 'A Deep RL Perspective on Internet Congestion Control', ICML 2019) "
          "telemetry features; dying ReLU at high Adam lr with all-positive inputs (cs231n notes "
          "'as much as 40% of your network can be dead'; Lu et al. 2019)")


class GoodputMLP(nn.Module):
    def __init__(self, n_in, hidden, depth):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = 1e-3 if fixed else [0.2, 0.1, 0.25][seed % 3]
    steps = 200
    window, n_f = 5, 5

    torch.manual_seed(seed)
    model = GoodputMLP(window * n_f, hidden, depth)
    batches = []
    for _ in range(steps):
        send_ratio = 1 + torch.rand(bs, window, generator=g)
        lat_ratio = 1 + torch.rand(bs, window, generator=g) * 2
        lat_grad = torch.rand(bs, window, generator=g) * 0.5
        loss_rate = torch.rand(bs, window, generator=g) * 0.1
        ack_rate = torch.rand(bs, window, generator=g)
        x = torch.cat([send_ratio, lat_ratio, lat_grad, loss_rate, ack_rate], 1)
        gp = ack_rate[:, -1] * (2.5 - lat_ratio[:, -1]) - 5 * loss_rate[:, -1] + 0.5 * ack_rate[:, -2] \
            - lat_grad[:, -1]
        y = (gp - 0.1) / 0.55 + 0.05 * torch.randn(bs, generator=g)
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(), batches=batches, steps=steps)
