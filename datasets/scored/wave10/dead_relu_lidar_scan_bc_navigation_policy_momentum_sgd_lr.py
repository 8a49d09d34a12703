"""Behaviour cloning of a ground-robot navigation policy: a ReLU MLP maps a raw 2-D lidar scan
(72 beams, ranges in metres, 0.3-8 m, all positive and not centred) plus the goal in the robot frame
to a (linear, angular) velocity command recorded from a reactive expert. The learning rate 0.03 with
momentum 0.9 was copied from a tutorial that trained on standardised features. Because every scan
feature is positive with mean ~4 m, the first gradient step moves all first-layer units' weights
in the same direction and the large momentum update pushes their pre-activations below zero for every
scan: the fc1 ReLUs die within a few steps, the network output collapses to a constant and the
imitation loss plateaus at the variance of the expert commands (finite throughout). Fixed: the
same model and data with lr 0.003."""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "fc1"
SOURCE = ("Dying-ReLU with a too-large SGD step on uncentred positive inputs (CS231n notes 'dying "
          "ReLU', common report in lidar/laser-scan imitation-learning policies for TurtleBot)")

N_BEAMS = 72


class ScanPolicy(nn.Module):
    def __init__(self, hidden=96):
        super().__init__()
        self.fc1 = nn.Linear(N_BEAMS + 2, hidden)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.act2 = nn.ReLU()
        self.head = nn.Linear(hidden, 2)

    def forward(self, scan, goal):
        h = self.act1(self.fc1(torch.cat([scan, goal], -1)))
        h = self.act2(self.fc2(h))
        out = self.head(h)
        return out[:, 0], out[:, 1]          # (v, omega)


def expert(scan, goal):
    ang = torch.linspace(-math.pi, math.pi, N_BEAMS + 1)[:-1]
    rep = (1.0 / scan.clamp(min=0.3) ** 2)
    push_x = -(rep * torch.cos(ang)).sum(1) * 0.05
    push_y = -(rep * torch.sin(ang)).sum(1) * 0.05
    gx, gy = goal[:, 0] + push_x, goal[:, 1] + push_y
    heading = torch.atan2(gy, gx)
    front = scan[:, N_BEAMS // 2 - 4:N_BEAMS // 2 + 4].min(1).values
    v = 0.5 * torch.tanh(front - 0.8) * torch.cos(heading).clamp(min=0)
    w = 1.2 * torch.tanh(heading)
    return torch.stack([v, w], 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ScanPolicy()

    def make_batch(B=128):
        # rooms: a few box-like obstacles give piecewise-smooth range profiles
        base = 2.0 + 5.0 * torch.rand(B, 1, generator=g)
        bumps = torch.zeros(B, N_BEAMS)
        for _ in range(3):
            c = torch.randint(0, N_BEAMS, (B, 1), generator=g)
            w = torch.randint(3, 12, (B, 1), generator=g)
            depth = 0.3 + 0.6 * torch.rand(B, 1, generator=g)
            idx = torch.arange(N_BEAMS)[None, :]
            dist = torch.minimum((idx - c).abs(), N_BEAMS - (idx - c).abs())
            bumps = torch.maximum(bumps, depth * (dist < w).float())
        scan = (base * (1 - bumps) + 0.05 * torch.randn(B, N_BEAMS, generator=g)).clamp(0.3, 8.0)
        goal = torch.randn(B, 2, generator=g) * 2.0
        y = expert(scan, goal)
        return (scan, goal), y

    data = [make_batch() for _ in range(20)]
    steps = 150
    batches = [data[i % len(data)] for i in range(steps)]

    def loss_fn(out, y):
        v, w = out
        return ((v - y[:, 0]) ** 2).mean() + ((w - y[:, 1]) ** 2).mean()

    opt = torch.optim.SGD(model.parameters(), lr=0.003 if fixed else 0.03, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
