"""Healthy: probabilistic battery state-of-charge estimation with a dilated causal TCN (Bai
et al. 2018 residual TCN blocks) over windows of voltage, current and temperature; the head
outputs a mean and a log-variance and the model is trained with nn.GaussianNLLLoss.

Why it looks alarming: the Gaussian negative log-likelihood goes below zero (and keeps
falling to about -2..-4) as the predicted variance shrinks, and it is noisy from batch to
batch.  That is expected for a likelihood on a [0,1]-scaled target with small noise: the
model is converging, nothing is broken.

ORIGIN: None (healthy).  `fixed=True` builds the identical run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Heteroscedastic Gaussian NLL (Nix & Weigend 1994; torch.nn.GaussianNLLLoss) for probabilistic SOC estimation with TCNs; negative NLL values are normal"

_CFG = {0: dict(ch=16, levels=3, lr=3e-3, bs=32, steps=100),
        1: dict(ch=24, levels=4, lr=2e-3, bs=16, steps=120),
        2: dict(ch=12, levels=3, lr=5e-3, bs=48, steps=80)}


class TBlock(nn.Module):
    def __init__(self, cin, cout, d):
        super().__init__()
        self.pad = nn.ConstantPad1d((2 * d, 0), 0.0)
        self.c1 = nn.Conv1d(cin, cout, 3, dilation=d)
        self.c2 = nn.Conv1d(cout, cout, 3, dilation=d)
        self.act = nn.ReLU()
        self.down = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.act(self.c1(self.pad(x)))
        h = self.c2(self.pad(h))
        return self.act(h + self.down(x))


class SOCTCN(nn.Module):
    def __init__(self, ch, levels):
        super().__init__()
        self.tcn = nn.Sequential(*[TBlock(3 if i == 0 else ch, ch, 2 ** i) for i in range(levels)])
        self.head = nn.Linear(ch, 2)

    def forward(self, x):
        h = self.tcn(x)[:, :, -1]
        o = self.head(h)
        return torch.cat([o[:, :1], o[:, 1:].clamp(-10, 5).exp()], 1)  # mean, variance


def _batch(g, n, L=32):
    soc0 = 0.1 + 0.85 * torch.rand(n, 1, generator=g)
    cur = 0.6 * torch.randn(n, L, generator=g) + 0.3 * torch.randn(n, 1, generator=g)
    soc = soc0 - 0.004 * cur.cumsum(1)
    temp = 0.3 * torch.randn(n, 1, generator=g).expand(n, L)
    v = 3.2 + 0.9 * soc - 0.2 * (1 - soc) ** 4 - 0.08 * cur + 0.01 * torch.randn(n, L, generator=g)
    x = torch.stack([(v - 3.7) / 0.3, cur, temp], 1)
    return x, soc[:, -1:] + 0.01 * torch.randn(n, 1, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    model = SOCTCN(c["ch"], c["levels"])
    opt = torch.optim.AdamW(model.parameters(), lr=c["lr"], weight_decay=1e-4)
    nll = nn.GaussianNLLLoss()

    def loss_fn(out, y):
        return nll(out[:, :1], y, out[:, 1:])

    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=c["steps"])
