"""Animal-movement step forecaster (GRU) trained on Euclidean error: sqrt(0) backward at resting fixes.

Mechanism: a GRU reads an animal's last 12 GPS steps (dx, dy in km, relative to the current
heading) plus time-of-day and habitat covariates and predicts the next step as
``speed * (cos(turn), sin(turn))``, with ``speed = relu(Linear(h))`` so it can't be negative.
It is trained directly on the mean Euclidean displacement error (ADE), written
``torch.sqrt(((pred - target) ** 2).sum(-1)).mean()``. About a third of the fixes come from
resting bouts, where the collar reports the same position twice, so the target step is exactly
(0, 0). As the speed head learns that the animal is resting, its pre-activation goes negative
for those windows, the ReLU outputs exactly 0, the predicted step is exactly (0, 0) and the
distance is sqrt(0). The loss value is fine, but the backward of sqrt at 0 is 1/(2*0) = inf and
times (pred - target) = 0 gives NaN; the NaN reaches the turn head and the GRU, every weight
becomes NaN in that step, and the loss is NaN from the next one on, after a calm, falling
start.

ORIGIN = None: the unsafe op is the sqrt inside the loss function, not a module; the speed ReLU
only supplies the exact zero it is evaluated at.

Fix: ``torch.sqrt(sq_dist + 1e-8)`` (an epsilon inside the sqrt); same model, data, optimiser
and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("PyTorch issues/forum on NaN gradients of torch.sqrt / norm at zero ('sqrt backward "
          "at 0 gives nan'); trajectory models trained on ADE; GPS collar data with duplicated "
          "fixes during resting bouts (step length exactly 0) in movement ecology")


class StepGRU(nn.Module):
    def __init__(self, d_in, hid, layers):
        super().__init__()
        self.gru = nn.GRU(d_in, hid, num_layers=layers, batch_first=True)
        self.speed = nn.Linear(hid, 1)
        self.speed_act = nn.ReLU()
        self.turn = nn.Linear(hid, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        h = h[:, -1]
        v = self.speed_act(self.speed(h))
        a = self.turn(h)
        return torch.cat([v * torch.cos(a), v * torch.sin(a)], -1)


def _make_loss(eps):
    def ade(pred, target):
        sq = ((pred - target) ** 2).sum(-1)
        return torch.sqrt(sq + eps).mean() if eps else torch.sqrt(sq).mean()
    return ade


def _tracks(g, n, K):
    # 3-state behaviour (rest, forage, travel) with persistence; steps relative to heading
    state = torch.randint(0, 3, (n,), generator=g)
    speeds = torch.tensor([0.0, 0.15, 0.6])
    conc = torch.tensor([0.0, 0.5, 4.0])
    seq = torch.zeros(n, K + 1, 2)
    for t in range(K + 1):
        switch = torch.rand(n, generator=g) < 0.08
        state = torch.where(switch, torch.randint(0, 3, (n,), generator=g), state)
        sp = speeds[state] * torch.exp(0.3 * torch.randn(n, generator=g))
        turn = torch.randn(n, generator=g) / (1 + conc[state])
        rest = state == 0
        step = torch.stack([sp * torch.cos(turn), sp * torch.sin(turn)], -1)
        step[rest] = 0.0                                   # duplicated fix: exactly zero
        seq[:, t] = step
    hour = torch.rand(n, 1, generator=g) * 24
    tod = torch.cat([torch.sin(hour / 24 * 2 * math.pi), torch.cos(hour / 24 * 2 * math.pi)], 1)
    hab = torch.randn(n, 2, generator=g)
    cov = torch.cat([tod, hab], 1)[:, None].expand(n, K, 4)
    x = torch.cat([seq[:, :K] * 3, cov], -1)
    return x, seq[:, K]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(14000 + seed)
    hid = [32, 48, 64][seed % 3]
    layers = [1, 1, 2][seed % 3]
    lr = [1.5e-3, 2.5e-3, 1e-3][seed % 3]
    bs = [64, 48, 96][seed % 3]
    K = 12
    steps = 200
    torch.manual_seed(seed)
    model = StepGRU(6, hid, layers)
    with torch.no_grad():
        model.speed.bias.fill_(0.5)                # start at a typical travelling step (km)
    x, y = _tracks(g, bs * steps, K)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=_make_loss(1e-8 if fixed else 0.0),
                batches=batches, steps=steps)
