"""Chess engine evaluation network in the NNUE style: a sparse board encoding
(12 piece types x 64 squares, ~14-30 active features per position) feeds a wide
feature-transformer Linear (the 'accumulator'), then ClippedReLU (clamp to [0, 1]) ->
Linear -> ClippedReLU -> Linear to a scalar eval; MSE against scaled engine evals
(centipawns / 400), SGD with momentum.

Mechanism: the trainer was switched from the reference Adam/Ranger setup to SGD with
momentum and the learning rate was taken from a dense-MLP SGD recipe.  The second
layer ``l1`` is narrow (16-32 units) and reads 128-256 accumulator outputs that are all
in [0, 1] (non-negative), so each of its units' pre-activations moves by roughly
(number of active inputs) x (per-weight step) in one update.  The first momentum-
amplified steps push most l1 pre-activations below zero for every position; ClippedReLU
has zero gradient there, so those units get no gradient to come back, and as they go
the accumulator units feeding only them lose their gradient too (a third of the
feature transformer ends up dead as well).  Within ~20 steps >90% of l1 is dead, the
eval is nearly constant and the loss sits at or above its starting level -- no NaN.

ORIGIN: ``l1`` -- the narrow ClippedReLU layer after the accumulator is where units
die first (the feature transformer's dead units follow from it).

Fix: the learning rate scaled to the sparse accumulator (10x lower); same model,
data, optimiser type and step count.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "l1"
SOURCE = ("Stockfish nnue-pytorch trainer (HalfKP/HalfKA feature transformer + ClippedReLU) "
          "and its 'dead neurons in the feature transformer' visualisation/discussion; "
          "Lu et al. 2019 'Dying ReLU and initialization'.")

N_FEATS = 768


class NNUE(nn.Module):
    def __init__(self, acc, l2):
        super().__init__()
        self.ft = nn.Linear(N_FEATS, acc)
        self.l1 = nn.Linear(acc, l2)
        self.out = nn.Linear(l2, 1)

    def forward(self, x):
        h = torch.clamp(self.ft(x), 0.0, 1.0)
        h = torch.clamp(self.l1(h), 0.0, 1.0)
        return self.out(h)


def _positions(g, n, pst, piece_val):
    x = torch.zeros(n, 12, 64)
    for i in range(n):
        k = int(torch.randint(14, 31, (1,), generator=g))
        sq = torch.randperm(64, generator=g)[:k]
        pc = torch.randint(0, 12, (k,), generator=g)
        x[i, pc, sq] = 1.0
    cp = (x * (piece_val[:, None] + pst)).sum((1, 2))
    cp = cp + 0.3 * torch.tanh(cp / 2) * (x[:, :6].sum((1, 2)) - x[:, 6:].sum((1, 2)))
    return x.view(n, N_FEATS), (cp / 20.0).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4096 + seed)
    acc = [128, 192, 256][seed % 3]
    l2 = [32, 16, 32][seed % 3]
    lr = [0.8, 1.0, 0.9][seed % 3]
    if fixed:
        lr = lr / 10
    bs = [64, 96, 48][seed % 3]
    steps = 150
    piece_val = torch.tensor([1., 3., 3., 5., 9., 0., -1., -3., -3., -5., -9., 0.])
    pst = 0.3 * torch.randn(12, 64, generator=g)

    model = NNUE(acc, l2)
    batches = [_positions(g, bs, pst, piece_val) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
