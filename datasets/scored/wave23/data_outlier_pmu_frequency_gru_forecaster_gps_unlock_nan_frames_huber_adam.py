"""Short-term grid-frequency forecasting from synchrophasor (PMU) streams: a GRU encoder
reads a window of PMU frames (frequency deviation in mHz, ROCOF, positive-sequence voltage
magnitude in p.u. and the phase-angle difference to a reference bus) and a linear head
predicts the frequency deviation of the next few frames; Huber loss, Adam.

Mechanism: when a PMU loses GPS lock (or the PDC times out waiting for it) the IEEE C37.118
STAT word flags the frame as invalid and the PDC archive exports the measurements of that
frame as NaN. The training windows are cut from the archive without checking STAT, and one
shuffled batch (its index changes with the seed) contains a few windows from such an
outage. The NaN enters the GRU, every hidden state after it is NaN, the batch loss is NaN
and the run is dead from that step on. All other batches are clean, and the run trains
normally up to the bad step.

ORIGIN = "encoder": the GRU is the first module the corrupt frames pass through and the
first whose output turns non-finite; the fault itself is in the data, not in that module.

Fix: drop the windows that contain non-finite values (what checking the STAT
data-valid bit does) before they are batched; the same batches otherwise, so the bad
batch is only a few windows smaller.
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder"
SOURCE = (
    "IEEE C37.118.2 STAT word (data valid / PMU sync error) and PDC archives (e.g. openPDC "
    "exports) that write invalid frames as NaN; reports of LSTM/GRU frequency forecasters "
    "going to loss=nan on one batch because PMU dropout rows were not removed."
)


def _pmu_windows(g, n, win, horizon):
    """Synthetic post-disturbance frequency dynamics plus ambient noise (30 frames/s)."""
    t = torch.arange(win + horizon, dtype=torch.float32) / 30.0
    step_mw = torch.empty(n, 1).uniform_(-1.0, 1.0, generator=g)        # generation trip / load step
    onset = torch.randint(0, win, (n, 1), generator=g).float() / 30.0
    zeta = torch.empty(n, 1).uniform_(0.15, 0.4, generator=g)
    wn = torch.empty(n, 1).uniform_(1.5, 3.5, generator=g)
    tau = (t.unsqueeze(0) - onset).clamp_min(0.0)
    wd = wn * torch.sqrt(1 - zeta ** 2)
    df = -step_mw * (1 - torch.exp(-zeta * wn * tau) * torch.cos(wd * tau)) * (tau > 0).float()
    df = df * 0.8 + 0.03 * torch.randn(n, win + horizon, generator=g)    # in units of 100 mHz
    rocof = torch.diff(df, dim=1, prepend=df[:, :1]) * 30.0 / 10.0
    vmag = 1.0 + 0.2 * df + 0.05 * torch.randn(n, win + horizon, generator=g)
    ang = torch.cumsum(df, 1) / 30.0
    x = torch.stack([df, rocof, (vmag - 1.0) * 10, ang], dim=-1)[:, :win]
    y = df[:, win:]
    return x.float(), y.float()


class PMUForecaster(nn.Module):
    def __init__(self, n_feat, hidden, horizon, layers):
        super().__init__()
        self.encoder = nn.GRU(n_feat, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        h, _ = self.encoder(x)
        return self.head(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    hidden = [48, 56, 32][seed % 3]
    layers = [1, 2, 1][seed % 3]
    batch = [32, 24, 40][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    win = [45, 48, 40][seed % 3]
    horizon = 6
    steps = 120
    bad_step = [57, 83, 38][seed % 3]

    g = torch.Generator().manual_seed(77 + seed)
    batches = []
    for i in range(steps):
        x, y = _pmu_windows(g, batch, win, horizon)
        if i == bad_step:
            # 3..5 windows overlap a GPS-unlock outage: a run of frames exported as NaN
            k = 3 + seed % 3
            rows = torch.randperm(batch, generator=g)[:k]
            start = int(torch.randint(0, win - 12, (1,), generator=g))
            x[rows, start:start + 10, :] = float("nan")
            if fixed:
                keep = torch.isfinite(x).all(dim=(1, 2)) & torch.isfinite(y).all(dim=1)
                x, y = x[keep], y[keep]
        batches.append((x, y))

    torch.manual_seed(seed)
    model = PMUForecaster(4, hidden, horizon, layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.HuberLoss(delta=1.0)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
