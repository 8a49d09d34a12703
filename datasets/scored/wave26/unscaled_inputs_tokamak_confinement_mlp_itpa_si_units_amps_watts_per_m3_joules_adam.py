"""MLP regression of the thermal stored energy of tokamak H-mode discharges from the ITPA global
confinement database columns, fed in the database's raw SI units (A, T, m^-3, W, m, J).

Mechanism: the ITPA/DB5-style table stores IP in A (~1e6), BT in T, NEL in m^-3 (~5e19),
PLTH in W (~1e7), RGEO/AMIN in m, KAPPA, MEFF, and the target WTH in J (~1e5-1e7).  The
script standardises nothing ("a neural net can learn the units").  The first Linear layer's
pre-activations are dominated by the density column (1e19 * w), the predictions start ~1e18,
the MSE is ~1e35-1e36 and every gradient is astronomically large; Adam's second-moment
estimate g^2 overflows float32 to inf for the weights touching the large columns, whose
updates then become 0, while the rest move by ~lr per step, far too little to bridge
1e6-1e18.  The loss stays at its huge starting level for the whole run.

ORIGIN: "net.0", the first Linear, which multiplies the raw 1e6-1e19 columns: the scale
problem enters the model there.

Fix: standardise the inputs (log of the positive physical columns, then z-score, as in the
IPB98 power-law fits) and the target (log WTH, z-scored); model, optimiser and steps
unchanged.  Seeds change the width, the depth, the learning rate and the batch size.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("ITPA global H-mode confinement database (DB3/DB5) column conventions (IP [A], NEL "
          "[m^-3], PLTH [W], WTH [J]) and the IPB98(y,2) scaling law; ML confinement-time "
          "regressions on it (e.g. 'Neural network models for tokamak energy confinement'); "
          "the standard advice to normalise inputs and targets (LeCun et al., Efficient "
          "BackProp).")


def _shots(n, g):
    u = torch.rand(n, 8, generator=g)
    ip = 0.5e6 + 2.5e6 * u[:, 0]                     # A
    bt = 1.0 + 4.0 * u[:, 1]                         # T
    nel = 2e19 + 8e19 * u[:, 2]                      # m^-3
    p = 1e6 + 2.9e7 * u[:, 3]                        # W
    r = 0.9 + 2.1 * u[:, 4]                          # m
    a = r / (2.8 + 1.0 * u[:, 5])                    # m
    kappa = 1.4 + 0.5 * u[:, 6]
    meff = 1.0 + 1.5 * u[:, 7]
    # IPB98(y,2): tau_E [s] with IP in MA, n in 1e19 m^-3, P in MW
    tau = (0.0562 * (ip / 1e6) ** 0.93 * bt ** 0.15 * (nel / 1e19) ** 0.41 * (p / 1e6) ** -0.69
           * r ** 1.97 * kappa ** 0.78 * (a / r) ** 0.58 * meff ** 0.19)
    w = tau * p * torch.exp(0.1 * torch.randn(n, generator=g))          # J
    x = torch.stack([ip, bt, nel, p, r, a, kappa, meff], 1)
    return x, w.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-3, 2e-3, 3e-3][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 150
    g = torch.Generator().manual_seed(16000 + seed)
    raw = [_shots(bs, g) for _ in range(steps)]
    if fixed:
        ref_x = torch.log(torch.cat([b[0] for b in raw[:20]]))
        ref_w = torch.log(torch.cat([b[1] for b in raw[:20]]))
        xm, xs, wm, ws = ref_x.mean(0), ref_x.std(0), ref_w.mean(), ref_w.std()
        batches = [((torch.log(x) - xm) / xs, (torch.log(w) - wm) / ws) for x, w in raw]
    else:
        batches = raw
    torch.manual_seed(seed)
    layers, d = [], 8
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.GELU()]
        d = width
    layers += [nn.Linear(d, 1)]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
