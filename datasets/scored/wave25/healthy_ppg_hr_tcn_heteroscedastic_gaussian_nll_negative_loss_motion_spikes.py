"""Healthy: wrist-PPG heart-rate estimation with a small dilated TCN that predicts a mean and a
variance per window (heteroscedastic regression, so the watch can hide HR readings it is unsure
about during motion), trained with Gaussian negative log-likelihood (nn.GaussianNLLLoss) and
Adam.

Why it looks suspicious but is fine: the NLL has no lower bound at zero - once the predicted
variance drops below 1/(2*pi*e) of the target scale the loss is negative, and it keeps going
down (to ~-1). Some batches are dominated by motion-artefact windows (a running session) where
the PPG peak is swamped by the arm-swing frequency: their loss jumps up for a step or two and
comes back, while the predicted variance on those windows grows as it should. The targets are
z-scored bpm; nothing is non-finite and the model learns.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("heteroscedastic HR estimation with Gaussian NLL (Kendall & Gal 2017; PPG-DaLiA "
          "motion-artefact windows); negative NLL values are expected for small variances")


class HRTCN(nn.Module):
    def __init__(self, ch, n_layers):
        super().__init__()
        layers, c_in = [], 4
        for i in range(n_layers):
            d = 2 ** i
            layers += [nn.Conv1d(c_in, ch, 3, dilation=d, padding=d), nn.ReLU()]
            c_in = ch
        self.tcn = nn.Sequential(*layers)
        self.mean = nn.Linear(ch, 1)
        self.logvar = nn.Linear(ch, 1)

    def forward(self, x):
        h = self.tcn(x).mean(-1)
        return torch.cat([self.mean(h), self.logvar(h)], -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [32, 24, 48][seed % 3]
    n_layers = [4, 5, 4][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 28, 24][seed % 3]
    steps = 200
    T = 128
    model = HRTCN(ch, n_layers)
    t = torch.arange(T).float() / 32.0  # 32 Hz, 4 s windows
    motion_steps = set(int(v) for v in torch.randperm(steps - 70, generator=g)[:8] + 20)
    batches = []
    for s in range(steps):
        bpm = 55 + 110 * torch.rand(bs, generator=g)
        motion = torch.rand(bs, generator=g) < (0.7 if s in motion_steps else 0.05)
        ppg = torch.sin(2 * 3.1416 * bpm[:, None] / 60 * t + 6.28 * torch.rand(bs, 1, generator=g))
        swing = 2.0 + 1.0 * torch.rand(bs, 1, generator=g)  # arm-swing Hz
        acc = motion[:, None].float() * 2.0 * torch.sin(2 * 3.1416 * swing * t)
        ppg = ppg + 2.5 * acc + 0.2 * torch.randn(bs, T, generator=g)
        accs = acc[:, None].repeat(1, 3, 1) * torch.rand(bs, 3, 1, generator=g) + 0.1 * torch.randn(bs, 3, T, generator=g)
        x = torch.cat([ppg[:, None], accs], 1)
        y = (bpm - 110) / 32.0
        batches.append((x, y))
    nll = nn.GaussianNLLLoss()

    def loss_fn(out, y):
        return nll(out[:, 0], y, out[:, 1].exp())

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
