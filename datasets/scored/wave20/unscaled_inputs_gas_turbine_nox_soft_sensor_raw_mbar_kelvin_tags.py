"""Soft sensor (virtual analyser) for gas-turbine NOx emissions (UCI 'Gas Turbine CO and NOx
Emission' data set, Kaya et al. 2019): an MLP maps process tags -- ambient temperature (K),
ambient pressure (mbar), humidity (%), air-filter dP (mbar), turbine exhaust pressure (mbar),
turbine inlet/after temperatures (K), compressor discharge pressure (mbar), energy yield (MWh)
-- to NOx in mg/m3, trained with SGD.

Mechanism: the tags are fed in raw engineering units (values ~1e1..1e3, ambient pressure
~1013 mbar) and the NOx target is raw mg/m3 (~40-100).  The first Linear layer's
pre-activations are in the hundreds-thousands, the MSE is ~1e3..1e4 from step 0 and the
gradients scale with the squared input magnitude, so SGD diverges to inf/NaN within a
handful of steps.

ORIGIN: `net.0`, the first Linear, which receives the unscaled tags.

Fix: standardise inputs and target with training-set mean/std (a StandardScaler), nothing else.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = "UCI Gas Turbine CO/NOx emission data (Kaya, Tufekci & Uzun 2019) soft sensors; raw process-unit inputs without StandardScaler causing NaN loss"

_CFG = {0: dict(h=32, lr=1e-2, bs=32, steps=60),
        1: dict(h=64, lr=5e-3, bs=16, steps=80),
        2: dict(h=48, lr=2e-2, bs=48, steps=50)}
_MEAN = torch.tensor([290.0, 1013.0, 77.0, 3.9, 25.6, 1359.0, 823.0, 134.0, 12.0])
_STD = torch.tensor([7.5, 6.4, 14.5, 0.77, 4.2, 19.0, 17.0, 15.0, 1.1])


def _batch(g, n):
    z = torch.randn(n, 9, generator=g)
    raw = _MEAN + _STD * z
    nox = 65.0 - 8.0 * z[:, 0:1] + 4.0 * z[:, 5:6] - 3.0 * z[:, 2:3] + 2.5 * z[:, 6:7] * z[:, 0:1] + 2.0 * torch.randn(n, 1, generator=g)
    return raw, nox


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(90 + seed)
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(nn.Linear(9, c["h"]), nn.ReLU(), nn.Linear(c["h"], c["h"]), nn.ReLU(), nn.Linear(c["h"], 1)))
    opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=0.9)
    batches = []
    for _ in range(c["steps"]):
        x, y = _batch(g, c["bs"])
        if fixed:
            x, y = (x - _MEAN) / _STD, (y - 65.0) / 9.0
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"])
