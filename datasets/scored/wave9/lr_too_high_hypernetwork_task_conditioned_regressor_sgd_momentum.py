"""Hypernetwork for a family of regression tasks (Ha et al. 2016 style, as used in meta-learning and
conditional PDE surrogates): a small hypernet maps a 4-d task descriptor (amplitude, frequency,
phase, offset of a damped oscillation) to ALL weights of a 1-64-1 tanh target network, which is then
evaluated at 32 query times per task; the tuple input is (task descriptors, query times). The run
uses SGD with momentum 0.9 at lr=2.0, a value that works for the small target net trained
on its own. Through the
hypernet, every weight update is multiplied by the generated-weight Jacobian (fan-out of 193
generated parameters per hidden unit), so the effective step is far above the stability limit:
the generated weights oscillate with growing amplitude, the MSE climbs by orders of magnitude and
overflows to inf/NaN within the first ten steps. The fix is lr=0.01, nothing else."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Ha, Dai & Le 2016 'HyperNetworks'; hypernetwork training instability with learning rates tuned for the target network"

D_TASK, HID, N_Q, STEPS, BATCH = 4, 64, 32, 120, 32
N_GEN = HID + HID + HID + 1          # w1, b1, w2, b2 of a 1-HID-1 target net


class HyperRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hyper = nn.Sequential(nn.Linear(D_TASK, 64), nn.ReLU(), nn.Linear(64, N_GEN))

    def forward(self, task, t):
        p = self.hyper(task)                                   # (B, N_GEN)
        w1, b1 = p[:, :HID], p[:, HID:2 * HID]
        w2, b2 = p[:, 2 * HID:3 * HID], p[:, 3 * HID:]
        h = torch.tanh(t.unsqueeze(-1) * w1.unsqueeze(1) + b1.unsqueeze(1))   # (B, Q, HID)
        return (h * w2.unsqueeze(1)).sum(-1) / math.sqrt(HID) + b2            # (B, Q)


def _tasks(g, n):
    task = torch.rand(n, D_TASK, generator=g) * 2 - 1
    amp, freq, ph, off = 1 + 0.5 * task[:, :1], 2 + task[:, 1:2], math.pi * task[:, 2:3], 0.5 * task[:, 3:]
    t = torch.rand(n, N_Q, generator=g) * 2 - 1
    y = amp * torch.exp(-0.5 * (t + 1)) * torch.sin(freq * math.pi * t + ph) + off
    return task, t, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    model = HyperRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 2.0, momentum=0.9)
    task, t, y = _tasks(g, STEPS * BATCH)
    batches = [((task[i * BATCH:(i + 1) * BATCH], t[i * BATCH:(i + 1) * BATCH]), y[i * BATCH:(i + 1) * BATCH])
               for i in range(STEPS)]

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
