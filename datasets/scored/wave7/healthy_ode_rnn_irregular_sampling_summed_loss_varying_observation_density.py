"""ODE-RNN (Rubanova et al. 2019) one-step-ahead forecaster for irregularly sampled sensor traces
(damped oscillations with random frequency/damping): between observations the hidden state evolves
by explicit-Euler integration of a learned tanh vector field dh/dt = f(h) (two substeps per gap),
and at each observation a GRUCell folds the new value in; the readout predicts the next observed
value. The loss is the squared error SUMMED over all observed points of the batch and divided by
the number of sequences (the "per-sequence NLL" convention), and the observation density changes
from batch to batch (each batch comes from a different logging mode, keeping 20%-100% of the
samples). The logged loss therefore jumps by 2-4x between consecutive steps (e.g. 2.8 -> 9.2) and
looks erratic and even rising at times. Nothing is wrong: per observed point the squared error
falls from ~0.4 to ~0.1-0.2 and the run converges."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Rubanova, Chen & Duvenaud 2019 'Latent ODEs for Irregularly-Sampled Time Series' "
          "(ODE-RNN encoder); loss summed over a varying number of observed points per batch")

T, HID = 24, 24


class ODERNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.field = nn.Sequential(nn.Linear(HID, HID), nn.Tanh(), nn.Linear(HID, HID))
        self.cell = nn.GRUCell(2, HID)
        self.readout = nn.Linear(HID, 1)

    def forward(self, times, values, mask):
        b = values.shape[0]
        h = torch.zeros(b, HID)
        t_prev = torch.zeros(b)
        preds = []
        for k in range(values.shape[1]):
            dt = (times[:, k] - t_prev).unsqueeze(1) * mask[:, k:k + 1]
            for _ in range(2):                           # Euler substeps across the gap
                h = h + 0.5 * dt * self.field(h)
            preds.append(self.readout(h).squeeze(-1))   # predict value at t_k before seeing it
            h_new = self.cell(torch.stack([values[:, k], dt.squeeze(1)], dim=1), h)
            m = mask[:, k:k + 1]
            h = m * h_new + (1 - m) * h                  # only observed points update the state
            t_prev = torch.where(mask[:, k] > 0, times[:, k], t_prev)
        return torch.stack(preds, dim=1)


def summed_masked_se(pred, y):
    values, mask = y
    return ((pred - values) ** 2 * mask).sum() / values.shape[0]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 120, 32
    batches = []
    for _ in range(steps):
        times = torch.sort(torch.rand(bs, T, generator=g) * 6.0, dim=1).values
        freq = 1.0 + 1.5 * torch.rand(bs, 1, generator=g)
        damp = 0.1 + 0.3 * torch.rand(bs, 1, generator=g)
        phase = 2 * math.pi * torch.rand(bs, 1, generator=g)
        values = 1.5 * torch.exp(-damp * times) * torch.cos(freq * times + phase)
        values = values + 0.05 * torch.randn(bs, T, generator=g)
        keep = 0.2 + 0.8 * torch.rand(1, generator=g)    # logging mode of this batch
        mask = (torch.rand(bs, T, generator=g) < keep).float()
        batches.append(((times, values, mask), (values, mask)))
    model = ODERNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=summed_masked_se, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
