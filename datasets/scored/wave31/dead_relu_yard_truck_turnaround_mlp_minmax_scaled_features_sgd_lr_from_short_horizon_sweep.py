"""Distribution-centre yard model: MLP predicting a truck's dock turnaround time (standardised log
minutes) from MinMax-scaled yard/appointment features and a one-hot carrier.

Mechanism: every input is MinMax-scaled to [0, 1] (or one-hot), so all inputs are non-negative. The
SGD+momentum learning rate was picked by a 20-step sweep, which rewards the lr whose loss drops
fastest at first. At that lr, each hidden unit's weight update has one sign across all of its
(non-negative) inputs, so one large step lowers (or raises) that unit's pre-activation for *every*
truck at once; with momentum the overshoot repeats and most first-layer units end up negative on the
whole data set. They output exactly zero, get zero gradient and never recover: the network
collapses to (almost) a constant prediction and the MSE plateaus at about the target variance --
no overflow, no NaN.

ORIGIN: ``net.1`` -- the first ReLU, where units die first; the later layer loses its input with it.

Fix: lr 6x lower (what a full-length sweep picks); model, data, loss and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("CS231n notes on ReLU units dying under a too-large learning rate ('as much as 40% of your "
          "network can be dead'); Wu et al. 'Understanding Short-Horizon Bias in Stochastic "
          "Meta-Optimization' (ICLR 2018) on short sweeps picking too-large step sizes")

N_CARRIER = 6


class TurnaroundMLP(nn.Module):
    def __init__(self, f, h, depth):
        super().__init__()
        layers, d = [], f
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.net = nn.Sequential(*layers)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.net(x)).squeeze(-1)


def _trucks(g, n):
    pallets = torch.randint(1, 34, (n,), generator=g).float()
    live_unload = (torch.rand(n, generator=g) < 0.4).float()
    doors_busy = torch.rand(n, generator=g)
    early_late = torch.rand(n, generator=g)                      # 0 = 2h early, 1 = 2h late
    forklifts = torch.randint(1, 9, (n,), generator=g).float()
    hour = torch.rand(n, generator=g)
    carrier = torch.randint(0, N_CARRIER, (n,), generator=g)
    c_eff = torch.tensor([1.0, 1.2, 0.9, 1.5, 1.1, 0.8])[carrier]
    minutes = (20 + 2.2 * pallets * (1 + live_unload) / (0.5 + forklifts / 4) * c_eff
               + 60 * doors_busy ** 2 + 40 * (early_late - 0.5).abs() + 15 * torch.sin(6.28 * hour))
    minutes = minutes * torch.exp(0.1 * torch.randn(n, generator=g))
    x = torch.cat([torch.stack([(pallets - 1) / 32, live_unload, doors_busy, early_late,
                                (forklifts - 1) / 7, hour], 1),
                   nn.functional.one_hot(carrier, N_CARRIER).float()], 1)      # all in [0, 1]
    return x, torch.log(minutes)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 96, 128][seed % 3]
    depth = [2, 2, 3][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [0.3, 0.35, 0.25][seed % 3]
    if fixed:
        lr = lr / 6
    steps = 150
    torch.manual_seed(seed)
    model = TurnaroundMLP(6 + N_CARRIER, h, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    raw = [_trucks(g, bs) for _ in range(steps)]
    ys = torch.cat([r[1] for r in raw])
    mu, sd = ys.mean(), ys.std()
    batches = [(x, (y - mu) / sd) for x, y in raw]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
