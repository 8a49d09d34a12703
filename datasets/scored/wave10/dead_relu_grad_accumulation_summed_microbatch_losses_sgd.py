"""Demand model (min-max scaled lag features in [0, 1] from the feature store, standardised
target) trained with "gradient accumulation written into the loss": to fit a large
effective batch on a small box, each step's batch holds 8 micro-batches and the loss function
loops over them, adding up each micro-batch's mean Huber (smooth L1) loss, instead of calling backward per
micro-batch. The lr (SGD, momentum 0.9) was tuned on single micro-batches, and the loop forgets
to divide by the number of accumulation steps, so every gradient is 8x what the lr was tuned for.
The first few updates overshoot: the pre-activations of the first ReLU layer get pushed to negative
values for every input in the positive unit cube, most hidden units (75-95%) go silent, and with no gradient flowing through
dead ReLUs the model is left predicting a near-constant. The loss plateaus near its starting value (Huber's bounded gradient
keeps it from diverging); nothing becomes NaN. Fixed: the accumulated loss is divided by the number of micro-batches (the
update size the lr was tuned for).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "net.0"
SOURCE = ("Gradient accumulation done by summing micro-batch losses without dividing by "
          "accumulation_steps (HF/Lightning docs: 'loss = loss / gradient_accumulation_steps'); "
          "CS231n note on ReLUs dying after a too-large update")

N_LAGS, ACCUM, MB = 20, 8, 16


class DemandNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_LAGS, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):                 # x: (ACCUM, MB, N_LAGS)
        return {"demand": self.net(x).squeeze(-1)}


def make_loss(fixed):
    def loss_fn(out, y):
        total = 0.0
        for k in range(ACCUM):           # accumulate over micro-batches
            total = total + F.smooth_l1_loss(out["demand"][k], y[k])
        if fixed:
            total = total / ACCUM
        return total
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DemandNet()
    w1 = torch.randn(N_LAGS, 8, generator=g) / N_LAGS ** 0.5
    w2 = torch.randn(8, generator=g)
    steps = 120
    batches = []
    for _ in range(steps):
        x = torch.rand(ACCUM, MB, N_LAGS, generator=g)          # min-max scaled lags in [0, 1]
        y = torch.tanh(2 * (x - 0.5) @ w1) @ w2
        y = y + 0.1 * torch.randn(ACCUM, MB, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fixed), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
