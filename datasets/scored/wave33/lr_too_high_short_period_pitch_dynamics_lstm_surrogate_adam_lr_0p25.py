"""Longitudinal short-period dynamics surrogate for flight-control design (LSTM, Adam).

Mechanism: a flight-control team fits a sequence model to flight-test/simulation data: from
the elevator command history (doublets, 3-2-1-1 inputs) and the trim condition (dynamic
pressure, CG position, standardised) an LSTM predicts the pitch rate q and angle-of-attack
increment over a 48-sample window. The run uses Adam with lr 0.2-0.3 - a value that worked for
the linear ARX baseline. For the LSTM it is far too large: each Adam step moves every gate
weight by ~lr, the input/forget gates are thrown into saturation and the recurrent state
jumps between regimes from step to step. The MSE bounces around its starting level and never
settles - a stall without any non-finite value, while the same run at lr 2e-3 fits the
dynamics.

ORIGIN: None - the over-large step size is applied to every parameter; no single module is
the start.

Fix: lr 2e-3 (same Adam, model, data and steps).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: Adam learning rate an order of magnitude too high for an LSTM "
          "(Karpathy 'A Recipe for Training Neural Networks': 3e-4 is the safe Adam lr); "
          "recurrent surrogates of aircraft short-period dynamics for system identification.")


class PitchDynamicsLSTM(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.rnn = nn.LSTM(3, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, 2)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h)


def _flights(g, n, T=48, dt=0.05):
    qbar = torch.rand(n, generator=g) * 2 - 1
    cg = torch.rand(n, generator=g) * 2 - 1
    wn = 3.0 + 1.2 * qbar - 0.6 * cg          # short-period natural frequency
    zeta = 0.45 + 0.15 * cg
    kq = 1.5 + 0.5 * qbar
    # 3-2-1-1 style elevator input with random amplitude and start
    de = torch.zeros(n, T)
    start = torch.randint(2, 10, (n,), generator=g)
    amp = (torch.rand(n, generator=g) * 2 - 1)
    pattern = [1] * 6 + [-1] * 4 + [1] * 2 + [-1] * 2
    for i in range(n):
        s = int(start[i])
        for k, p in enumerate(pattern):
            if s + k < T:
                de[i, s + k] = amp[i] * p
    q = torch.zeros(n)
    qd = torch.zeros(n)
    alpha = torch.zeros(n)
    qs, al = [], []
    for t in range(T):
        qdd = -2 * zeta * wn * qd - wn ** 2 * q + kq * wn ** 2 * de[:, t]
        qd = qd + dt * qdd
        q = q + dt * qd
        alpha = alpha + dt * (q - 1.2 * alpha)
        qs.append(q)
        al.append(alpha)
    y = torch.stack([torch.stack(qs, 1), torch.stack(al, 1) * 3], -1)
    x = torch.stack([de, qbar[:, None].expand(n, T), cg[:, None].expand(n, T)], -1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    hidden = [64, 48, 96][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr_bad = [0.2, 0.25, 0.3][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 100
    model = PitchDynamicsLSTM(hidden, layers)
    x, y = _flights(g, bs * steps)
    y = (y - y.mean((0, 1))) / y.std((0, 1))
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3 if fixed else lr_bad)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
