"""Linear matter power spectrum emulator (CosmoPower / EuclidEmulator style): an MLP maps the
cosmological parameters (omega_b, omega_cdm, h, n_s, A_s, z) to P(k) at 40 log-spaced wavenumbers
0.001-1 h/Mpc, trained with SGD + momentum on an MSE loss.

Mechanism: the training table is used as produced by the Boltzmann-code wrapper: the inputs are
raw (A_s ~ 2e-9, omega_b ~ 0.02, h ~ 0.7, z up to 3, i.e. feature scales spanning nine decades)
and the targets are P(k) in (Mpc/h)^3, from ~1 on small scales to ~3e4 near the turnover.  The MSE
is ~1e8 at step 0 and its gradient with respect to the output layer is ~1e4 times the size the
learning rate was chosen for; the first SGD steps throw the output-layer weights to enormous values, the next
forward pass is larger still, and within a few steps the loss overflows to inf / nan.  (A_s,
which sets the amplitude, is 2e-9 and effectively invisible to the first layer anyway.)

ORIGIN: ``net.0``, the first Linear, which receives the unscaled parameters (the unscaled targets
act through the loss on every layer, but the input side of the problem starts here).

Fix: standardise the inputs (z-score each parameter, A_s as ln(1e10 A_s)) and train on
standardised log10 P(k), as CosmoPower does; same model, optimiser, learning rate and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("CosmoPower (Spurio Mancini et al. 2022) trains on standardised parameters and log10 P(k); "
          "raw (Mpc/h)^3 targets and A_s ~ 2e-9 inputs reported to diverge in emulator tutorials / "
          "forum threads; BBKS (Bardeen et al. 1986) transfer function for the toy spectra")

N_K = 40


def _spectra(g, n):
    ob = 0.019 + 0.007 * torch.rand(n, generator=g)
    oc = 0.10 + 0.04 * torch.rand(n, generator=g)
    h = 0.6 + 0.15 * torch.rand(n, generator=g)
    ns = 0.92 + 0.08 * torch.rand(n, generator=g)
    As = (1.7 + 0.8 * torch.rand(n, generator=g)) * 1e-9
    z = 3.0 * torch.rand(n, generator=g)
    k = torch.logspace(-3, 0, N_K)[None, :]                      # h/Mpc
    om = (ob + oc) / h ** 2
    gamma = (om * h * torch.exp(-ob / h ** 2 * (1 + 1 / om)))[:, None]
    q = k / gamma
    T = torch.log(1 + 2.34 * q) / (2.34 * q) * \
        (1 + 3.89 * q + (16.1 * q) ** 2 + (5.46 * q) ** 3 + (6.71 * q) ** 4) ** -0.25
    growth = (1.0 / (1 + z))[:, None] * (om[:, None] ** 0.1)
    pk = 2.4e7 * (As[:, None] / 2.1e-9) * k ** ns[:, None] * T ** 2 * growth ** 2
    params = torch.stack([ob, oc, h, ns, As, z], 1)
    return params, pk


class MLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 192, 256][seed % 3]
    depth = [3, 4, 3][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150

    params, pk = _spectra(g, bs * steps)
    if fixed:
        p = params.clone()
        p[:, 4] = torch.log(1e10 * p[:, 4])
        x = (p - p.mean(0)) / p.std(0)
        lp = torch.log10(pk)
        y = (lp - lp.mean(0)) / lp.std(0)
    else:
        x, y = params, pk

    torch.manual_seed(seed)
    layers, d = [], 6
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.SiLU()]
        d = width
    layers.append(nn.Linear(d, N_K))
    model = MLP(layers)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
