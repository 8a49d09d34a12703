"""LSTNet-style multivariate forecaster (Conv1d over the 8 series -> GRU -> linear head, plus the
autoregressive 'highway' linear component over the last 12 lags) for standardised electricity-
like load series. The reference config trains with Adam at lr=1e-3; the author switches the
optimizer to SGD with momentum 0.9 "for better generalisation" and takes lr=0.8 from a sweep that
was run on a summed (not averaged) loss, i.e. on a much smaller effective step. The first momentum steps overshoot:
the AR highway weights and the GRU input weights take updates larger than the weights
themselves, predictions oscillate with growing amplitude, and within ~20 steps the MSE
overflows to inf and then NaN. The fix only lowers the learning rate to 0.02."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("LSTNet (Lai et al. 2018, laiguokun/LSTNet) with an SGD+momentum optimizer at a "
          "learning rate far above the stable range; common 'loss becomes nan after a few "
          "iterations' reports for time-series forecasters trained with SGD.")

N, W, H_AR = 8, 48, 12


class LSTNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(N, 32, kernel_size=6)
        self.gru = nn.GRU(32, 32, batch_first=True)
        self.head = nn.Linear(32, N)
        self.highway = nn.Linear(H_AR, 1)

    def forward(self, x):  # x: (B, W, N)
        c = torch.relu(self.conv(x.transpose(1, 2)))  # (B, 32, W-5)
        _, h = self.gru(c.transpose(1, 2))
        nonlinear = self.head(h[-1])
        ar = self.highway(x[:, -H_AR:, :].transpose(1, 2)).squeeze(-1)  # per-series AR
        return nonlinear + ar


def simulate(g, length):
    t = torch.arange(length, dtype=torch.float32)
    phase = torch.rand(N, generator=g) * 2 * math.pi
    amp = 0.5 + torch.rand(N, generator=g)
    s = amp * torch.sin(2 * math.pi * t[:, None] / 24.0 + phase) \
        + 0.4 * torch.sin(2 * math.pi * t[:, None] / 168.0 + phase * 2)
    s = s + 0.15 * torch.randn(length, N, generator=g)
    return (s - s.mean(0)) / s.std(0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = LSTNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else 0.8, momentum=0.9)
    series = simulate(g, 3000)
    steps, B = 150, 32
    batches = []
    for s in range(steps):
        st = torch.randint(0, 3000 - W - 1, (B,), generator=g).tolist()
        x = torch.stack([series[i:i + W] for i in st])
        y = torch.stack([series[i + W] for i in st])
        batches.append((x, y))

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
