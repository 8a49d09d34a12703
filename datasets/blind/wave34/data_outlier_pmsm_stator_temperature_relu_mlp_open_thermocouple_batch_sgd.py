"""Stator-winding temperature surrogate for an EV traction PMSM: a ReLU MLP on standardised
operating-point features (i_d, i_q, u_d, u_q, motor speed, coolant temp, ambient temp, torque
set-point, and a rotor-side thermocouple reading) regressing the winding hot-spot temperature
(standardised), trained with plain SGD and MSE, as in the usual motor-temperature estimation
benchmarks.

Mechanism: on one test-bench session a K-type thermocouple went open-circuit and the DAQ logged
its full-scale value for the whole window; after z-scoring with the clean statistics that
feature sits ~+120 sigma.  Every other batch is clean and the run is calm; the single corrupt
batch (its position varies with the seed) produces a prediction error and a first-layer gradient
thousands of times larger than usual, the SGD step blows the weights up and the loss becomes
non-finite a few steps later.

ORIGIN: ``body.0`` - the first Linear, the first layer the corrupt batch hits (its weight column
for the thermocouple feature takes the giant update).

Fix: filter the batch - the open-circuit rows are detected by the full-scale sentinel and
dropped (here: the window is taken from the clean stream), everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "body.0"
SOURCE = ("Known pattern: open-circuit thermocouple logging full-scale values in motor test-bench "
          "data (cf. Kaggle 'Electric Motor Temperature' PMSM dataset discussions); a single "
          "extreme batch blows up plain-SGD regression")


class StatorTempMLP(nn.Module):
    def __init__(self, n_in, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(),
                                  nn.Linear(width, width), nn.ReLU())
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 96, 48][seed % 3]
    lr = [0.05, 0.04, 0.06][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 160
    bad_step = [6, 9, 7][seed % 3]
    n_in = 9

    model = StatorTempMLP(n_in, width)
    w1 = torch.randn(n_in, 16, generator=g) / 3
    w2 = torch.randn(16, generator=g) / 2

    batches = []
    for step in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        y = torch.tanh(x @ w1) @ w2 + 0.4 * x[:, 8] + 0.1 * torch.randn(bs, generator=g)
        if step == bad_step and not fixed:
            x[:, 8] = 120.0          # open thermocouple: full-scale reading after z-scoring
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
