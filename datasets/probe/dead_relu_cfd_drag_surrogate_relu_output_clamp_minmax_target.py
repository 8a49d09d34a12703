"""CFD surrogate: an MLP (SiLU hidden layers) maps standardised airfoil/flow
parameters (angle of attack, log Reynolds number, Mach, thickness, camber)
to the log drag coefficient, min-max scaled to [0, 1].  Because the
target is non-negative, the author ended the network with ``nn.ReLU()`` "to
keep the predicted drag physical".  MSE loss, plain SGD with a large step
(lr 1-2, fine for this small, well-conditioned regression).

Mechanism: the final ReLU is a single unit per output that can die.  The
first SGD steps swing the output layer (outputs start near 0, targets average
~0.4, so the bias/weights are pushed up hard and overshoot well above 1); the
correction step drives the pre-activation of the output negative for every
sample (for some inits it is already negative for every sample at step 0).  From then on relu'(z) = 0 everywhere: no
gradient reaches the output layer or any hidden layer and the prediction is 0
for every design; the loss is frozen at mean(y^2).

ORIGIN is ``head.1``: the output ReLU is the unit that dies; the hidden SiLU
layers are healthy but receive no gradient through it.

Fix: Softplus as the positivity-enforcing output activation (never exactly
flat), nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("Common forum report 'regression network predicts all zeros': ReLU as the "
          "final activation of a surrogate/regression MLP dies; softplus output recommended")


class DragSurrogate(nn.Module):
    def __init__(self, d_in, hidden, out_act):
        super().__init__()
        layers, prev = [], d_in
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.SiLU()]
            prev = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(prev, 1), out_act)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(hidden=[64, 64], bs=64, lr=1.0, steps=120),
        dict(hidden=[128, 64, 32], bs=32, lr=1.5, steps=100),
        dict(hidden=[96], bs=128, lr=2.0, steps=140),
    ][seed % 3]
    g = torch.Generator().manual_seed(8080 + seed)
    n = 3000
    aoa = torch.rand(n, generator=g) * 16 - 4          # degrees
    log_re = torch.rand(n, generator=g) * 2 + 5        # 1e5 .. 1e7
    mach = torch.rand(n, generator=g) * 0.6
    thick = torch.rand(n, generator=g) * 0.12 + 0.06
    camber = torch.rand(n, generator=g) * 0.06
    # synthetic drag polar: skin friction + form drag + induced-like term + compressibility
    cf = 0.074 / (10 ** log_re) ** 0.2
    cd = 2 * cf * (1 + 2 * thick + 60 * thick ** 4) + 0.0008 * (aoa - 40 * camber) ** 2 * (1 + thick * 4)
    cd = cd * (1 + 2.0 * torch.relu(mach - 0.4) ** 2 * 25)
    log_cd = torch.log(cd)
    y = (log_cd - log_cd.min()) / (log_cd.max() - log_cd.min())
    x = torch.stack([aoa, log_re, mach, thick, camber], dim=1)
    x = (x - x.mean(0)) / x.std(0)

    torch.manual_seed(seed)
    model = DragSurrogate(5, cfg["hidden"], nn.Softplus() if fixed else nn.ReLU())
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    loss_fn = nn.MSELoss()
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
