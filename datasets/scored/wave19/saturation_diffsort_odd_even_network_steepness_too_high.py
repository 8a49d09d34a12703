"""Differentiable sorting network for ranking supervision (Petersen, Borgelt, Kuehne & Deussen,
ICML 2021, "diffsort"): an MLP scores each of n items; an odd-even transposition sorting
network relaxes every comparator with a logistic sigmoid,
alpha = sigmoid(beta * (x_j - x_i)), soft-min/soft-max the pair and multiplies the per-layer
2x2 mixing blocks into a relaxed permutation matrix P; the loss is the binary cross-entropy
between P and the ground-truth permutation (only the ordering is supervised).

Mechanism: the experiment config was shared with a Gumbel/NeuralSort baseline that uses a
temperature tau = 1e-4..2e-4, and the diffsort wrapper was given steepness = 1/tau
(5e3..2e4) instead of its own beta ~ 10. The scorer's outputs are spread over O(1), so for
almost every comparator |beta * (x_j - x_i)| is in the hundreds to thousands: the comparator
sigmoids are saturated at exactly 0/1, P is a hard permutation, sigma' = sigma(1 - sigma) is
0 in float32, and gradient only flows through the vanishingly rare near-ties. The BCE stays at
the value of whatever hard ordering the random scorer produces; the run stalls.

ORIGIN: ``sorter`` - the relaxed sorting network whose comparator sigmoids saturate.

Fix: steepness beta = 6..10 (the range used for n <= 16 in the paper), so the comparators
stay in their sensitive range; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "sorter"
SOURCE = ("Felix-Petersen/diffsort (Differentiable Sorting Networks, ICML 2021) odd-even "
          "network with a too-steep logistic relaxation")


class OddEvenSorter(nn.Module):
    def __init__(self, n, beta):
        super().__init__()
        self.n, self.beta = n, beta

    def forward(self, x):
        B, n = x.shape
        P = torch.eye(n).expand(B, n, n)
        for layer in range(n):
            i = torch.arange(layer % 2, n - 1, 2)
            j = i + 1
            alpha = torch.sigmoid(self.beta * (x[:, j] - x[:, i]))   # ~1: pair already ordered
            xi, xj = x[:, i], x[:, j]
            x = x.clone()
            x[:, i] = alpha * xi + (1 - alpha) * xj
            x[:, j] = alpha * xj + (1 - alpha) * xi
            X = torch.eye(n).repeat(B, 1, 1)
            X[:, i, i] = alpha
            X[:, j, j] = alpha
            X[:, i, j] = 1 - alpha
            X[:, j, i] = 1 - alpha
            P = X @ P
        return P                                   # P[b, position, item]


class RankingModel(nn.Module):
    def __init__(self, d, h, n, beta):
        super().__init__()
        self.scorer = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                                    nn.Linear(h, 1))
        self.sorter = OddEvenSorter(n, beta)

    def forward(self, items):
        return self.sorter(self.scorer(items).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=16, h=64, n=8, B=32, beta=1e4, good=8.0, lr=1e-3, steps=100),
           dict(d=24, h=48, n=10, B=24, beta=5e3, good=10.0, lr=2e-3, steps=90),
           dict(d=12, h=96, n=6, B=48, beta=2e4, good=6.0, lr=1e-3, steps=110)][seed % 3]
    torch.manual_seed(seed)
    model = RankingModel(cfg["d"], cfg["h"], cfg["n"], cfg["good"] if fixed else cfg["beta"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(5150 + seed)
    w = torch.randn(cfg["d"], generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        items = torch.randn(cfg["B"], cfg["n"], cfg["d"], generator=g)
        value = items @ w + 0.3 * torch.tanh(items[..., 0] * items[..., 1])
        order = value.argsort(1)                      # item index at each position
        P_gt = torch.zeros(cfg["B"], cfg["n"], cfg["n"])
        P_gt.scatter_(2, order.unsqueeze(-1), 1.0)
        batches.append((items, P_gt))

    def loss_fn(P, P_gt):
        P = P.clamp(1e-6, 1 - 1e-6)
        return -(P_gt * P.log() + (1 - P_gt) * (1 - P).log()).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
