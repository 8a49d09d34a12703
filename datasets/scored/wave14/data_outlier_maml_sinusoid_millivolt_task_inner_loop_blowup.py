"""MAML sinusoid regression (inner loop inside forward) hit by one task logged in millivolts.

Mechanism: the meta-learner is an ordinary nn.Module whose forward runs one (or two) inner
SGD steps on the support set with ``create_graph=True`` and returns the adapted network's
query predictions (Finn et al. 2017, 40-40 ReLU regressor, MSE).  Every task is a sine wave
in volts (amplitude 0.5-3) except one task in one meta-batch whose recording was exported in
millivolts (x1000).  On that task the support MSE is ~1e6 times its normal size, the
inner SGD step throws the fast weights far from the meta-parameters, the query predictions
explode and the second-order meta-gradient of that single step is many orders of magnitude
larger than usual.  Adam's second-moment estimate absorbs that squared gradient; with
beta2 = 0.999 it needs thousands of steps to forget it, so for the rest of the run every
meta-update is tiny and the meta-loss stays where it was (or the backward overflows
outright and the loss turns NaN).

ORIGIN is None: nothing is wrong with any module; one corrupt task in the data stream
poisons the optimizer state.

Fix: drop (or re-scale) the task whose amplitude is out of the physical range.
"""
import math
import torch
import torch.nn as nn
from torch.func import functional_call

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Finn et al. 2017 MAML sinusoid benchmark (learn2learn/higher style inner loop); "
          "unit-mismatch record in a meta-training stream poisoning Adam's second moment")


class Regressor(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


class MAML(nn.Module):
    def __init__(self, hidden, inner_lr, inner_steps):
        super().__init__()
        self.learner = Regressor(hidden)
        self.inner_lr = inner_lr
        self.inner_steps = inner_steps

    def forward(self, support_x, support_y, query_x):
        preds = []
        params = dict(self.learner.named_parameters())
        for sx, sy, qx in zip(support_x, support_y, query_x):
            fast = params
            for _ in range(self.inner_steps):
                loss = ((functional_call(self.learner, fast, (sx,)) - sy) ** 2).mean()
                grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
                fast = {k: w - self.inner_lr * gr for (k, w), gr in zip(fast.items(), grads)}
            preds.append(functional_call(self.learner, fast, (qx,)))
        return torch.stack(preds)


def sample_tasks(n_tasks, k_shot, n_query, amp_range, g):
    lo, hi = amp_range
    amp = lo + (hi - lo) * torch.rand(n_tasks, 1, 1, generator=g)
    phase = math.pi * torch.rand(n_tasks, 1, 1, generator=g)
    xs = 10 * torch.rand(n_tasks, k_shot + n_query, 1, generator=g) - 5
    ys = amp * torch.sin(xs - phase)
    return xs[:, :k_shot], ys[:, :k_shot], xs[:, k_shot:], ys[:, k_shot:]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=40, inner_lr=0.05, inner_steps=1, tasks=24, k=10, amp=(0.5, 2.0),
                lr=3e-3, steps=150, bad_step=8),
           dict(hidden=64, inner_lr=0.05, inner_steps=1, tasks=16, k=10, amp=(1.0, 3.0),
                lr=5e-3, steps=150, bad_step=60),
           dict(hidden=48, inner_lr=0.03, inner_steps=2, tasks=20, k=8, amp=(0.5, 2.0),
                lr=4e-3, steps=130, bad_step=25)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(55 + seed)
    model = MAML(cfg["hidden"], cfg["inner_lr"], cfg["inner_steps"])
    batches = []
    for step in range(cfg["steps"]):
        sx, sy, qx, qy = sample_tasks(cfg["tasks"], cfg["k"], 15, cfg["amp"], g)
        if step == cfg["bad_step"]:
            if fixed:  # task with an out-of-range amplitude is dropped from the meta-batch
                sx, sy, qx, qy = sx[1:], sy[1:], qx[1:], qy[1:]
            else:      # one recording exported in millivolts
                sy[0] *= 1000.0
                qy[0] *= 1000.0
        batches.append(((sx, sy, qx), qy))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
