"""Lane-change intention classifier (keep lane / change left / change right) for highway ADAS:
an LSTM over the last 2 s of ego and surrounding-vehicle kinematics (lateral offset to lane
centre, lateral velocity, heading relative to lane, yaw rate, turn-signal state, gaps and
relative speeds to the lead / left-lead / right-lead vehicles), cross-entropy loss, Adam.

Mechanism: the Adam lr (0.5-1.0) was copied from a hyper-parameter sweep of a logistic-regression
baseline.  Every Adam step moves every LSTM weight by ~lr, i.e. update/weight ratios of order
0.5-1: the gates saturate back and forth, the recurrent weights are thrown around every step and
the loss never goes below the class-prior entropy it started from (it bounces around it; no
inf/NaN - Adam's normalised step keeps the values finite).

ORIGIN: None - the too-high lr is a property of the optimisation, not of one module.

Fix: Adam lr 2e-3 (same model, data, steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: Adam lr of order 0.1 on an LSTM -> oscillating loss that never improves "
          "(Karpathy 'A Recipe for Training Neural Networks': 3e-4 is the safe Adam lr); lane-change "
          "intention prediction on highD/NGSIM-style trajectories")


class LaneChangeLSTM(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, num_layers=layers, batch_first=True)
        self.cls = nn.Linear(hidden, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.cls(out[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [0.8, 0.5, 1.0][seed % 3]
    bs = [32, 64, 48][seed % 3]
    T = 20
    steps = 150
    if fixed:
        lr = 2e-3
    n_in = 10
    model = LaneChangeLSTM(n_in, hidden, layers)

    t = torch.linspace(0, 1, T)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, 3, (bs,), generator=g)
        direction = torch.tensor([0.0, 1.0, -1.0])[y][:, None]
        onset = torch.rand(bs, 1, generator=g) * 0.6
        ramp = torch.clamp((t[None] - onset) / 0.4, 0, 1)
        lat_off = direction * ramp * 1.2 + 0.2 * torch.randn(bs, T, generator=g)
        lat_vel = direction * (ramp > 0).float() * (ramp < 1).float() * 1.0 + 0.3 * torch.randn(bs, T, generator=g)
        heading = 0.5 * lat_vel + 0.2 * torch.randn(bs, T, generator=g)
        yaw = 0.3 * torch.randn(bs, T, generator=g)
        signal = (direction * (torch.rand(bs, 1, generator=g) < 0.6).float()).expand(bs, T)
        gaps = torch.randn(bs, 5, generator=g)[:, :, None].expand(bs, 5, T).transpose(1, 2) \
            + 0.1 * torch.randn(bs, T, 5, generator=g)
        x = torch.cat([torch.stack([lat_off, lat_vel, heading, yaw, signal], -1), gaps], -1)
        batches.append((x, y))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
