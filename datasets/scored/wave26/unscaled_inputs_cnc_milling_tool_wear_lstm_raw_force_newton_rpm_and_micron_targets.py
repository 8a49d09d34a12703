"""CNC milling tool-wear regressor (LSTM) fed raw sensor units and raw flank-wear targets.

Mechanism: as in the PHM 2010 milling data, each cut is summarised by 40 time steps
of spindle speed (rpm, ~1e4), feed (mm/min, ~1e3), cutting forces Fx/Fy/Fz
(N, 1e2-1e3), vibration (g, ~1), acoustic emission RMS (V, ~0.1) and spindle power
(W, ~5e3); the target is the flank wear VB in micrometres (~60-260). Nothing is
standardised. The LSTM gates see pre-activations of hundreds to thousands: every
sigmoid/tanh in the cell is pinned, the hidden state is a fixed +-1 pattern that
hardly depends on the cut, and the weights of the gates receive no usable gradient.
The MSE starts at ~3e4 (um^2) and Adam can move the output only by ~lr per
parameter per step, so over the run the loss barely moves from its starting level:
a stall with finite values.

ORIGIN: ``lstm`` - the first layer receiving the unscaled features (its gates
saturate at once).

Fix: standardise every input channel and the wear target with training-set means and
standard deviations; same model, optimiser, learning rate and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "lstm"
SOURCE = ("PHM Society 2010 data challenge (CNC milling cutter wear: forces in N, vibration in g, "
          "AE in V, wear in 1e-3 mm); LSTM tool-wear models (Zhao et al. 2017 'Learning to monitor "
          "machine health with CNN/LSTM'); scikit-learn / CS231n advice on standardising inputs "
          "and regression targets.")

T = 40
# rpm, feed, Fx, Fy, Fz, vib, AE, power
MEAN = torch.tensor([10400.0, 1555.0, 250.0, 230.0, 380.0, 1.0, 0.15, 5200.0])
SCALE = torch.tensor([800.0, 200.0, 120.0, 110.0, 150.0, 0.4, 0.06, 900.0])


class ToolWearLSTM(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(8, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1]).squeeze(-1)


def _cuts(g, n):
    wear = 60 + 200 * torch.rand(n, 1, generator=g)                   # um
    w = (wear - 60) / 200
    rpm = MEAN[0] + SCALE[0] * torch.randn(n, 1, generator=g)
    feed = MEAN[1] + SCALE[1] * torch.randn(n, 1, generator=g)
    tt = torch.linspace(0, 1, T)[None, :]
    load = 1 + 0.3 * torch.sin(6.28 * (tt + torch.rand(n, 1, generator=g)))
    force_gain = (0.7 + 0.8 * w) * (feed / MEAN[1])
    fx = 180 * force_gain * load + 15 * torch.randn(n, T, generator=g)
    fy = 160 * force_gain * load + 15 * torch.randn(n, T, generator=g)
    fz = 270 * force_gain * load + 20 * torch.randn(n, T, generator=g)
    vib = (0.6 + 0.9 * w ** 2) * load + 0.1 * torch.randn(n, T, generator=g)
    ae = 0.08 + 0.12 * w + 0.02 * torch.randn(n, T, generator=g)
    power = 3800 + 2500 * w * load + 200 * torch.randn(n, T, generator=g)
    x = torch.stack([rpm.expand(-1, T), feed.expand(-1, T), fx, fy, fz, vib, ae, power], -1)
    y = wear.squeeze(-1) + 5 * torch.randn(n, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2010 + seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 1, 2][seed % 3]
    lr = [5e-4, 4e-4, 3e-4][seed % 3]
    bs = [32, 48, 64][seed % 3]
    steps = 150
    model = ToolWearLSTM(hidden, layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        x, y = _cuts(g, bs)
        if fixed:
            x = (x - MEAN) / SCALE
            y = (y - 160.0) / 58.0
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
