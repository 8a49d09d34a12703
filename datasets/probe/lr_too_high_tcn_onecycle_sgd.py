"""TCN forecaster (causal dilated Conv1d residual blocks) trained with SGD+momentum under OneCycleLR,
stepped per iteration by an optimiser hook. max_lr, read off the steep end of an lr finder, is ~10x
too high: early warmup is calm and the MSE falls, but once the ramp passes the stability limit
(lr > ~2/sharpness) updates overshoot, weights grow geometrically and the loss turns inf/NaN mid-run.
fixed=True: max_lr / 10, same one-cycle shape, data and model.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("fastai/OneCycle 'choose max_lr from lr_find' pitfall (Smith 2018 super-convergence; "
          "torch OneCycleLR with SGD momentum): max_lr taken too high diverges during the warmup phase")

MAX_LR_BAD = 1.0
CTX, HORIZON = 48, 8


class TemporalBlock(nn.Module):
    def __init__(self, c, dilation, k=3):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv1 = nn.Conv1d(c, c, k, dilation=dilation)
        self.conv2 = nn.Conv1d(c, c, k, dilation=dilation)

    def forward(self, x):
        h = F.gelu(self.conv1(F.pad(x, (self.pad, 0))))
        h = self.conv2(F.pad(h, (self.pad, 0)))
        return F.gelu(x + h)


class TCN(nn.Module):
    def __init__(self, c=24, dilations=(1, 2, 4, 8)):
        super().__init__()
        self.inp = nn.Conv1d(1, c, 1)
        self.blocks = nn.Sequential(*[TemporalBlock(c, d) for d in dilations])
        self.head = nn.Linear(c, HORIZON)

    def forward(self, x):                       # x: (B, CTX)
        h = self.blocks(self.inp(x.unsqueeze(1)))
        return self.head(h[:, :, -1])


def _data(seed, steps, bs=32):
    g = torch.Generator().manual_seed(70 + seed)
    t = torch.arange(CTX + HORIZON).float()
    batches = []
    for _ in range(steps):
        p1 = 8 + 24 * torch.rand(bs, 1, generator=g)
        p2 = 3 + 6 * torch.rand(bs, 1, generator=g)
        ph = 2 * math.pi * torch.rand(bs, 2, generator=g)
        a = 0.5 + torch.rand(bs, 2, generator=g)
        s = a[:, :1] * torch.sin(2 * math.pi * t / p1 + ph[:, :1]) \
            + 0.5 * a[:, 1:] * torch.sin(2 * math.pi * t / p2 + ph[:, 1:])
        s = s + 0.1 * torch.randn(bs, CTX + HORIZON, generator=g)
        batches.append((s[:, :CTX], s[:, CTX:]))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    steps = 200
    torch.manual_seed(seed)
    model = TCN()
    max_lr = MAX_LR_BAD / 10 if fixed else MAX_LR_BAD
    opt = torch.optim.SGD(model.parameters(), lr=max_lr, momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=steps + 1, pct_start=0.4)
    opt.register_step_post_hook(lambda *_: sched.step())   # per-iteration policy, trainer-callback style
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=_data(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
