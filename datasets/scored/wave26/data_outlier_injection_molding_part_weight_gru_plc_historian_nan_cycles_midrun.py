"""Injection-moulding soft sensor: GRU predicts shot (part) weight from the cycle profile.

Mechanism: each sample is one machine cycle sampled 40x (injection pressure, melt
temperature, screw position, mould temperature), standardised with plant-wide
statistics; the target is the standardised part weight from the inline scale. The
training data comes from the PLC historian export. During one shift the OPC-UA
connection to the pressure transducer dropped and the historian wrote NaN for the
affected samples. Those cycles end up in a single mini-batch mid-run (the step moves
with the seed). The NaN enters the GRU, the prediction and the MSE become NaN at that
step, and Adam then writes NaN into every parameter: the loss stays non-finite.

ORIGIN: ``gru`` - the first module the corrupt batch reaches; the model itself is
sound, the data is not.

Fix: drop cycles with any non-finite sample before batching (the usual
``torch.isfinite(x).all(dim=(1, 2))`` row filter); same model, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "gru"
SOURCE = ("Soft sensors for injection moulding part weight/quality from cycle profiles (e.g. "
          "Ke & Huang 2020, Polymers); historian/OPC-UA exports writing NaN on communication loss "
          "is a routine data-cleaning issue in plant data (pandas read of PI/OSIsoft exports).")


class ShotWeightGRU(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(4, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(-1)


def _cycles(g, n, L=40):
    t = torch.linspace(0, 1, L)[None, :]
    hold_p = 1 + 0.15 * torch.randn(n, 1, generator=g)       # holding pressure level
    melt = 0.2 * torch.randn(n, 1, generator=g)               # melt temperature offset
    mould = 0.2 * torch.randn(n, 1, generator=g)
    switch = 0.35 + 0.1 * torch.rand(n, 1, generator=g)      # v/p switch-over point
    pressure = torch.where(t < switch, 2.0 * t / switch, hold_p) + 0.05 * torch.randn(n, L, generator=g)
    temp = melt + 0.05 * torch.randn(n, L, generator=g)
    screw = torch.clamp(1 - t / switch, min=0) + 0.1 * (1 - hold_p) * (t >= switch)
    mtemp = mould + 0.1 * t
    x = torch.stack([pressure - 1, temp, screw - 0.3, mtemp], -1)
    # part weight rises with holding pressure & melt temp, falls with early switch-over
    w = 1.2 * (hold_p - 1) / 0.15 + 0.5 * melt / 0.2 - 0.8 * (switch - 0.4) / 0.05 - 0.3 * mould / 0.2
    y = (w + 0.1 * torch.randn(n, 1, generator=g)).squeeze(-1) / 1.5
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 48, 32][seed % 3]
    bad_step = [37, 58, 81][seed % 3]
    steps = 110
    model = ShotWeightGRU(hidden, layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for s in range(steps):
        x, y = _cycles(g, bs)
        if s == bad_step:
            # historian lost the pressure transducer for part of the shift
            nbad = 3 + seed % 4
            rows = torch.randperm(bs, generator=g)[:nbad]
            start = int(torch.randint(0, 30, (1,), generator=g))
            x[rows, start:start + 10, 0] = float("nan")
            if fixed:
                keep = torch.isfinite(x).all(dim=2).all(dim=1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
