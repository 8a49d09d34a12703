"""N-BEATS-style generic forecaster (doubly residual stack of fully connected blocks, each emitting
a backcast that is subtracted from the block input and a forecast that is summed) whose weights
were initialised by a hand-written loop `nn.init.normal_(w, 0.0, 1.0)` (a port of a TF1
`random_normal_initializer()` with its default stddev=1) instead of a fan-in scaled init. Each
64-wide ReLU layer multiplies the activation scale by roughly sqrt(64/2)~5.7, so a single
4-layer block already emits backcasts thousands of times larger than the (standardised) input;
the residual `x - backcast` then feeds that into the next block, where the growth repeats. The
forecast loss is astronomically large from step 0 and the first SGD steps overflow to inf/NaN.
The fixed run uses the framework default (kaiming-uniform, fan-in scaled) initialisation."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "blocks.0.fc.0"
SOURCE = ("N-BEATS (Oreshkin et al. 2019) generic architecture; recurring forum reports of "
          "'loss is inf from the first step' after porting TF1 models whose initializers "
          "default to random_normal(stddev=1.0)")

LOOKBACK, HORIZON, WIDTH = 48, 12, 64
LR, STEPS = 0.05, 150


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(
            nn.Linear(LOOKBACK, WIDTH), nn.ReLU(),
            nn.Linear(WIDTH, WIDTH), nn.ReLU(),
            nn.Linear(WIDTH, WIDTH), nn.ReLU(),
            nn.Linear(WIDTH, WIDTH), nn.ReLU(),
        )
        self.theta_b = nn.Linear(WIDTH, LOOKBACK)
        self.theta_f = nn.Linear(WIDTH, HORIZON)

    def forward(self, x):
        h = self.fc(x)
        return self.theta_b(h), self.theta_f(h)


class NBeats(nn.Module):
    def __init__(self, n_blocks=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(n_blocks)])

    def forward(self, x):
        resid, forecast = x, 0.0
        for b in self.blocks:
            back, f = b(resid)
            resid = resid - back
            forecast = forecast + f
        return forecast, resid


def make_series(g, n):
    t = torch.arange(LOOKBACK + HORIZON, dtype=torch.float32)
    period = 8 + 16 * torch.rand(n, 1, generator=g)
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    amp = 0.5 + torch.rand(n, 1, generator=g)
    slope = 0.02 * torch.randn(n, 1, generator=g)
    y = amp * torch.sin(2 * math.pi * t / period + phase) + slope * t
    y = y + 0.1 * torch.randn(n, LOOKBACK + HORIZON, generator=g)
    y = y - y[:, :LOOKBACK].mean(1, keepdim=True)
    return y[:, :LOOKBACK].contiguous(), y[:, LOOKBACK:].contiguous()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = NBeats()
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 1.0)
                nn.init.zeros_(m.bias)
    steps = STEPS
    batches = [make_series(g, 64) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)

    def loss_fn(out, y):
        forecast, _ = out
        return nn.functional.mse_loss(forecast, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
