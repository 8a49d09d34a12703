"""Team-formation recognition (4-4-2 / 4-3-3 / 3-5-2 / 4-2-3-1) from a possession's tracking data
with a Deep-Sets model: phi (per player-frame MLP with ReLU) -> SUM over all players and frames ->
rho (Linear -> tanh -> Linear) -> logits; cross-entropy, Adam.

Mechanism: the permutation-invariant pooling is a plain sum over 10 outfield players x 20-40
frames (200-400 elements).  phi's ReLU outputs are non-negative, so the pooled vector is
hundreds of times larger than one element, and rho's first Linear produces pre-activations of
magnitude ~10-30 at step 0, growing to ~250-330: rho's tanh is saturated at +-1 for ~90-100% of
units and samples from step 0.  Its derivative
(1 - tanh^2) is ~0, so nothing below it learns and the logits are a fixed function of sign
patterns; the loss stays at ~log(4) (all values finite) - a stall.

ORIGIN: ``rho.1`` - the tanh in rho is where the units saturate and the gradient is cut.

Fix: mean pooling instead of sum pooling (the DeepSets paper's normalised variant), which keeps
rho's pre-activations O(1); same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "rho.1"
SOURCE = ("Known pattern: sum-pooling in Deep Sets / GNN readouts feeding tanh/sigmoid layers "
          "saturates as set size grows (Zaheer et al. 2017; Wagstaff et al. 2019 'On the "
          "limitations of representing functions on sets'; Xu et al. GIN notes on sum vs mean).")


class FormationDeepSets(nn.Module):
    def __init__(self, d_in, hidden, n_cls, pool):
        super().__init__()
        self.pool = pool
        self.phi = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_cls))

    def forward(self, x):                     # x: (B, frames*players, d_in)
        h = self.phi(x)
        h = h.sum(1) if self.pool == "sum" else h.mean(1)
        return self.rho(h)


FORMATIONS = [
    [(0.25, y) for y in (0.15, 0.38, 0.62, 0.85)] + [(0.5, y) for y in (0.15, 0.38, 0.62, 0.85)] + [(0.75, 0.4), (0.75, 0.6)],
    [(0.25, y) for y in (0.15, 0.38, 0.62, 0.85)] + [(0.5, y) for y in (0.3, 0.5, 0.7)] + [(0.75, y) for y in (0.2, 0.5, 0.8)],
    [(0.25, y) for y in (0.3, 0.5, 0.7)] + [(0.5, y) for y in (0.1, 0.3, 0.5, 0.7, 0.9)] + [(0.75, 0.4), (0.75, 0.6)],
    [(0.25, y) for y in (0.15, 0.38, 0.62, 0.85)] + [(0.45, 0.4), (0.45, 0.6)] + [(0.62, y) for y in (0.2, 0.5, 0.8)] + [(0.8, 0.5)],
]


def _data(g, n, F):
    base = torch.tensor(FORMATIONS)                         # (4, 10, 2)
    y = torch.randint(0, 4, (n,), generator=g)
    shift = 0.1 * torch.randn(n, F, 1, 2, generator=g).cumsum(1) / F ** 0.5   # block shifts
    pos = base[y].unsqueeze(1) + shift + 0.04 * torch.randn(n, F, 10, 2, generator=g)
    x = ((pos - 0.5) * 3.0).reshape(n, F * 10, 2)          # players unlabelled (set input)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    hidden = [64, 48, 96][seed % 3]
    frames = [30, 40, 20][seed % 3]
    lr = [0.01, 0.012, 0.008][seed % 3]
    bs = [16, 24, 32][seed % 3]
    steps = 120
    model = FormationDeepSets(2, hidden, 4, pool="mean" if fixed else "sum")
    x, y = _data(g, bs * steps, frames)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
