"""Healthy: LSTM inertial odometry (IONet-style) that integrates IMU readings into a
velocity estimate at every timestep.  Sequences in a batch are cut to a common random
length (bucketed sampler: 16..48 steps, varying per batch), and the loss is the squared
error SUMMED over time and averaged over the batch (the paper's per-sequence loss).

Why it looks alarming but is fine: because the loss scales with the sequence length of
each bucket, it jumps up and down by ~4x from one step to the next (long buckets look like
loss spikes, short ones like sudden progress).  Underneath, the per-step error falls
steadily; lr, init and data are fine.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "IONet (Chen et al. 2018) / RoNIN LSTM odometry; 'loss jumps around with bucketed variable-length batches' forum threads"


class IONet(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.lstm = nn.LSTM(6, d, num_layers=layers, batch_first=True)
        self.out = nn.Linear(d, 3)

    def forward(self, imu):
        h, _ = self.lstm(imu)
        return self.out(h)


def _batch(g, B, T):
    acc = torch.randn(B, T, 3, generator=g) * 0.5 + torch.randn(B, 1, 3, generator=g) * 0.3
    gyr = torch.randn(B, T, 3, generator=g) * 0.1
    vel = torch.zeros(B, T, 3)
    v = torch.zeros(B, 3)
    for t in range(T):  # leaky integration (velocity with drag)
        v = 0.85 * v + 0.3 * acc[:, t]
        vel[:, t] = v
    return torch.cat([acc, gyr], -1), vel


def build(seed: int, fixed: bool = False) -> dict:
    d, layers, lr, B = [(32, 1, 1e-2, 16), (48, 1, 5e-3, 12), (32, 2, 5e-3, 16)][seed % 3]
    torch.manual_seed(seed)
    model = IONet(d, layers)
    g = torch.Generator().manual_seed(11000 + seed)
    steps = 150
    batches = []
    for _ in range(steps):
        T = int(torch.randint(16, 49, (1,), generator=g))
        batches.append(_batch(g, B, T))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def summed_mse(pred, vel):
        return ((pred - vel) ** 2).sum(dim=(1, 2)).mean()

    return dict(model=model, optimizer=opt, loss_fn=summed_mse, batches=batches, steps=steps)
