"""Reaction-time regression for a random-dot motion task: a ReLU MLP maps trial features (signed
coherence, speed/accuracy cue, previous-trial outcome, previous RT, trial position in block) to the
reaction time in seconds, trained with MSE and SGD with momentum; the readout bias starts at the
typical RT (0.8 s).

Mechanism: the training set is pooled over sessions; one session was exported by an older rig
script that logged RT in milliseconds instead of seconds. Its ~200 trials land in two consecutive
batches (where, depends on the seed): targets of 300-1500 instead of 0.3-1.5, so those batches
have a loss of ~1e6 and gradients ~1000x the usual. The momentum buffer carries the huge step on;
the ReLU MLP's weights overshoot, the error grows geometrically and within a few steps the loss is
inf/NaN. All other batches are clean.

ORIGIN: None. The corruption is in the targets of the batches and reaches every layer at once
through the loss gradient; no single module is where it starts.

Fix: unit sanity filter in the loader: RTs above 10 are milliseconds and are divided by 1000 (the
session is converted to seconds). Model, optimiser, lr and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Mixed-unit behavioural exports (ms vs s) across rigs/sessions, a common issue in pooled "
          "psychophysics data (PsychoPy/IBL data-cleaning notes); 'loss suddenly becomes nan "
          "mid-epoch' forum threads traced to a handful of rows with targets in the wrong unit")


def _trials(n, g):
    coh = torch.tensor([0.0, 0.032, 0.064, 0.128, 0.256, 0.512])[torch.randint(0, 6, (n,), generator=g)]
    sign = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
    speed = (torch.rand(n, generator=g) < 0.5).float()
    prev_err = (torch.rand(n, generator=g) < 0.2).float()
    prev_rt = 0.4 + 0.6 * torch.rand(n, generator=g)
    tblock = torch.rand(n, generator=g)
    # chronometric function: mean decision time a/(k c) tanh(a k c), boundary lower under speed cue
    a = 1.4 - 0.5 * speed
    kc = 10.0 * coh + 1e-3
    dt = a / kc * torch.tanh(a * kc)
    rt = 0.3 + dt + 0.08 * prev_err + 0.1 * (prev_rt - 0.7) - 0.05 * tblock
    rt = rt * torch.exp(0.08 * torch.randn(n, generator=g))
    x = torch.stack([sign * coh * 5, coh * 5, speed, prev_err, prev_rt, tblock], 1)
    return x, rt[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    batch = [64, 128, 96][seed % 3]
    lr = [0.01, 0.008, 0.012][seed % 3]
    steps = 200
    bad_step = [9, 31, 22][seed % 3]

    layers, d = [], 6
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    torch.manual_seed(seed)
    model = nn.Sequential(*layers)
    with torch.no_grad():  # start the readout at the typical RT (0.8 s), a standard warm start
        model[-1].bias.fill_(0.8)

    batches = []
    for s in range(steps):
        x, rt = _trials(batch, g)
        if s in (bad_step, bad_step + 1):  # the session spans two batches
            rt = rt * 1000.0  # this session's RTs were logged in ms
            if fixed:
                rt = torch.where(rt > 10.0, rt / 1000.0, rt)
        batches.append((x, rt))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
