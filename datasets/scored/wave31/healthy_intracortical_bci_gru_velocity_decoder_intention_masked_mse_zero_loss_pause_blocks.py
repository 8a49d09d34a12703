"""Intracortical BCI cursor control (ReFIT-style recalibration): a GRU decodes 2-D cursor velocity
from 20 ms bins of multi-unit spike counts (square-root transformed, z-scored with calibration
statistics) recorded during closed-loop centre-out trials. The training target is the
*intended* velocity (re-aimed toward the target, Gilja et al. 2012) and the loss is an
intention-masked MSE: bins in which the user is holding on the target or the task is paused
(no target on screen) carry no intention label and are masked out; the masked sum is divided by
the number of labelled bins (clamped at 1). RMSprop.

Why it is healthy although a naive monitor might flag it: every 12th block of the session is a
task pause (no target shown), so the whole batch is masked and its loss is exactly 0.0 with an
exactly-zero gradient: the optimiser takes a zero-gradient step (RMSprop's running average
decays, nothing moves). In the other blocks the proportion of labelled bins varies, so the loss
is noisy, but the decoder learns.

ORIGIN: None (healthy run).

Fix: nothing to fix; fixed=True builds the same run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Gilja et al. 2012 Nat. Neurosci. 'A high-performance neural prosthesis enabled by control "
          "algorithm design' (ReFIT intention re-aiming, hold periods excluded); RNN decoders for "
          "iBCI cursor control (Sussillo et al. 2012)")


class VelocityGRU(nn.Module):
    def __init__(self, n_units, hidden):
        super().__init__()
        self.gru = nn.GRU(n_units, hidden, batch_first=True)
        self.readout = nn.Linear(hidden, 2)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.readout(h)


def masked_mse(pred, target):
    vel, mask = target[..., :2], target[..., 2:]
    return (((pred - vel) ** 2) * mask).sum() / mask.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_units = [96, 64, 128][seed % 3]
    hidden = [64, 96, 48][seed % 3]
    bs = [16, 24, 16][seed % 3]
    lr = [2e-3, 1.5e-3, 2e-3][seed % 3]
    t_len = 40
    steps = 160
    # cosine-tuned units with baseline rates and a mild history dependence
    pref = torch.randn(n_units, 2, generator=g)
    base = 0.5 + 1.5 * torch.rand(n_units, generator=g)          # spikes per 20 ms bin (high)
    batches = []
    for s in range(steps):
        pause = s % 12 == 11
        ang = 2 * math.pi * torch.rand(bs, 1, generator=g)
        reach = torch.cat([torch.cos(ang), torch.sin(ang)], -1)     # target direction
        tt = torch.arange(t_len).float().view(1, -1, 1)
        onset = torch.randint(2, 10, (bs, 1, 1), generator=g).float()
        speed = torch.sigmoid((tt - onset) / 2) * torch.sigmoid((onset + 22 - tt) / 3)
        vel = speed * reach.unsqueeze(1) * (1 + 0.3 * torch.randn(bs, 1, 1, generator=g))
        rate = base * torch.exp(0.6 * torch.einsum("btd,nd->btn", vel, pref).clamp(max=3))
        counts = torch.poisson(rate, generator=g)
        x = (torch.sqrt(counts) - torch.sqrt(base)) / 0.5
        moving = (speed > 0.15).float()                             # intention labelled while reaching
        if pause:
            moving = torch.zeros_like(moving)                        # task paused: no target shown
        batches.append((x, torch.cat([vel * 2.0, moving], -1)))
    torch.manual_seed(seed)
    model = VelocityGRU(n_units, hidden)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": masked_mse, "batches": batches, "steps": steps}
