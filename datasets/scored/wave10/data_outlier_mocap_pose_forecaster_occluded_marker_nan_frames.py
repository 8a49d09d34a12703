"""Short-horizon human motion forecasting from optical motion capture: a GRU encoder reads 10 frames
of 15 body-joint 3-D positions and their frame-to-frame velocities (hip-centred, metres,
standardised) and an MLP decoder predicts the next 5 frames as offsets from the last observed pose. The capture sessions were exported from the
mocap software with occluded markers written as NaN (the C3D/TRC convention for gaps), and the
gap-filling step was skipped for one session: the batch that contains those clips (step 70 of a
calm run) carries NaN coordinates, the GRU turns them into a NaN loss, and the backward pass writes
NaN into every weight so the run never recovers. Fixed: the clips with unfilled gaps are dropped from
that batch before training (torch.isfinite filter) - nothing else changes."""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder"
SOURCE = ("NaN-marked occluded markers in C3D/TRC motion-capture exports (Human3.6M/CMU mocap "
          "pipelines must gap-fill); NaN batch poisoning a forecaster")

J, T_IN, T_OUT = 15, 10, 5
BAD_STEP = 70


class MotionForecaster(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.encoder = nn.GRU(2 * J * 3, hidden, batch_first=True)
        self.decoder = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, T_OUT * J * 3))

    def forward(self, past):
        vel = torch.cat([torch.zeros_like(past[:, :1]), past[:, 1:] - past[:, :-1]], 1) * 5.0
        _, h = self.encoder(torch.cat([past, vel], -1).flatten(2))
        off = self.decoder(h[-1]).view(-1, T_OUT, J, 3)
        return past[:, -1:] + off


def synth_motion(g, B):
    rest = torch.randn(1, 1, J, 3, generator=g) * 0.3
    freq = 0.8 + 0.8 * torch.rand(B, 1, 1, 1, generator=g)
    phase = torch.rand(B, 1, J, 1, generator=g) * 2 * math.pi
    amp = 0.1 + 0.2 * torch.rand(B, 1, J, 3, generator=g)
    t = torch.arange(T_IN + T_OUT).float()[None, :, None, None] / 25.0 * 2 * math.pi
    seq = rest + amp * torch.sin(freq * t + phase) + 0.01 * torch.randn(B, T_IN + T_OUT, J, 3, generator=g)
    return seq / 0.25


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MotionForecaster()
    steps = 150
    batches = []
    for step in range(steps):
        seq = synth_motion(g, 48)
        past, fut = seq[:, :T_IN].clone(), seq[:, T_IN:].clone()
        if step == BAD_STEP:
            # one session exported without gap filling: markers occluded for a few frames
            clips = torch.randperm(48, generator=g)[:6]
            for c in clips.tolist():
                j = int(torch.randint(0, J, (1,), generator=g))
                f0 = int(torch.randint(0, T_IN - 3, (1,), generator=g))
                past[c, f0:f0 + 3, j] = float("nan")
            if fixed:
                keep = torch.isfinite(past).flatten(1).all(1) & torch.isfinite(fut).flatten(1).all(1)
                past, fut = past[keep], fut[keep]
        batches.append((past, fut))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
