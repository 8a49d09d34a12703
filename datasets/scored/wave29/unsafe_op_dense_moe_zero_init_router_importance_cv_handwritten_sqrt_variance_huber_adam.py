"""Dense (soft) mixture-of-experts regressor for a multi-regime process (4-8 small SiLU
MLP experts, softmax router), Huber loss plus Shazeer-style importance balancing loss
w * CV(importance)^2, Adam.

Mechanism: the router is zero-initialised (as in the reference noisy-top-k code, so that all
experts start equally used), which makes every gate exactly 1/E on the first step and the
per-expert importance (sum of gates over the batch) exactly equal.  The balancing loss was
written with a hand-rolled population standard deviation,
``sqrt(((imp - imp.mean())**2).mean()) / imp.mean()``, and its square taken afterwards.
The forward value is a harmless 0, but the backward of sqrt at 0 is inf, multiplied by the
exactly-zero deviations: 0 * inf = NaN.  The NaN lands in the router's gradient on the very
first backward, Adam writes it into the router weights, and every loss from the next step
on is NaN.

ORIGIN: ``router`` -- the module whose output feeds the unsafe sqrt and whose parameters are
the first to receive the NaN gradient (the Huber part and the experts are sound).

Fix: the Shazeer formulation CV^2 = var / (mean^2 + eps), i.e. no sqrt at all (equivalently
sqrt(var + eps)); same model, zero-init router, weights, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "router"
SOURCE = ("Shazeer et al. 2017 sparsely-gated MoE importance loss (cv_squared = var/mean^2 "
          "in the reference implementation, zero-initialised w_gate); known pattern: a "
          "hand-written sqrt-of-variance std, d sqrt(x)/dx at 0 -> NaN gradients")


class Expert(nn.Module):
    def __init__(self, n_in, hid):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hid), nn.SiLU(), nn.Linear(hid, 1))

    def forward(self, x):
        return self.net(x)


class SoftMoE(nn.Module):
    def __init__(self, n_in, hid, n_exp):
        super().__init__()
        self.experts = nn.ModuleList([Expert(n_in, hid) for _ in range(n_exp)])
        self.router = nn.Linear(n_in, n_exp, bias=False)
        nn.init.zeros_(self.router.weight)

    def forward(self, x):
        gates = torch.softmax(self.router(x), dim=1)                        # (B, E)
        outs = torch.cat([e(x) for e in self.experts], dim=1)               # (B, E)
        return (gates * outs).sum(1), gates


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(16000 + seed)
    n_in = 16
    n_exp = [4, 6, 8][seed % 3]
    hid = [32, 24, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [128, 96, 64][seed % 3]
    w_bal = 0.01
    steps = 150

    regime_w = torch.randn(3, n_in, generator=g)
    coef = torch.randn(3, n_in, generator=g) / 4.0
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        regime = (x @ regime_w.t()).argmax(1)
        y = (x * coef[regime]).sum(1) + torch.sin(2 * x[:, 0]) * (regime == 1).float() \
            + 0.1 * torch.randn(bs, generator=g)
        batches.append((x, y))

    torch.manual_seed(seed)
    model = SoftMoE(n_in, hid, n_exp)

    def loss_fn(out, y):
        pred, gates = out
        imp = gates.sum(0)
        if fixed:
            cv2 = imp.var(unbiased=False) / (imp.mean() ** 2 + 1e-10)
        else:
            cv = torch.sqrt(((imp - imp.mean()) ** 2).mean()) / imp.mean()
            cv2 = cv ** 2
        return F.huber_loss(pred, y, delta=1.0) + w_bal * cv2

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
