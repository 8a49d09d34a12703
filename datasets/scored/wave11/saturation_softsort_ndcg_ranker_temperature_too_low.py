"""Listwise ranker trained through a differentiable sort: an MLP scores 20 candidates per query, a
SoftSort layer (Prillo & Eisenschlos 2020) turns the scores into a relaxed permutation matrix P =
softmax(-|sort(s)_i - s_j| / tau), and the loss is 1 - NDCG of the soft-sorted gains P @ g,
optimised with SGD + momentum. The temperature was set to tau = 1e-4 "to be close to a hard sort",
while neighbouring scores differ by ~0.03 at init: every softmax row sees pre-activations of -300
and below for all but one entry, P is numerically a hard permutation (row max 0.997-1.0), and the
NDCG loss is piecewise constant in the scores. On >90% of the steps the gradient is exactly zero; on
the rare steps where two scores are within ~tau of each other it is ~1/tau times larger, and those
spikes inflate the score scale (score std 0.3 -> 100+), which makes the saturation even deeper. The
loss wanders around the random-ranking level for the whole run, never non-finite. With tau = 1 (on
the scale of the score gaps) the same model and optimiser learn to rank."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "softsort"
SOURCE = ("SoftSort (Prillo & Eisenschlos, ICML 2020) / NeuralSort (Grover et al. 2019) temperature: too "
          "small tau makes the relaxed permutation hard and gradients vanish; PiRank/NeuralNDCG use "
          "tau ~ 1 on normalised scores")

NQ, ND, NF = 16, 20, 16


class SoftSort(nn.Module):
    def __init__(self, tau):
        super().__init__()
        self.tau = tau

    def forward(self, s):                                     # s: [Q, N]
        s_sorted = s.sort(dim=-1, descending=True).values
        pre = -(s_sorted.unsqueeze(-1) - s.unsqueeze(-2)).abs() / self.tau
        return F.softmax(pre, dim=-1)                         # [Q, N(rank), N(doc)]


class SortRanker(nn.Module):
    def __init__(self, tau):
        super().__init__()
        self.scorer = nn.Sequential(nn.Linear(NF, 64), nn.ReLU(), nn.Linear(64, 1))
        self.softsort = SoftSort(tau)

    def forward(self, x):
        return self.softsort(self.scorer(x).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1212 + seed)
    w_true = torch.randn(NF, generator=g)
    steps = 150
    batches = []
    for _ in range(steps):
        x = torch.randn(NQ, ND, NF, generator=g)
        util = x @ w_true / math.sqrt(NF) + 0.3 * torch.randn(NQ, ND, generator=g)
        grade = torch.bucketize(util, torch.tensor([0.0, 0.7, 1.4])).float()
        grade[:, 0] = torch.maximum(grade[:, 0], torch.ones(NQ))   # every query has a relevant doc
        batches.append((x, grade))
    model = SortRanker(tau=1.0 if fixed else 1e-4)
    opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    disc = 1.0 / torch.log2(torch.arange(ND, dtype=torch.float32) + 2.0)

    def loss_fn(P, grade):
        gains = 2.0 ** grade - 1.0
        soft_sorted = (P @ gains.unsqueeze(-1)).squeeze(-1)          # [Q, N]
        dcg = (soft_sorted * disc).sum(-1)
        idcg = (gains.sort(-1, descending=True).values * disc).sum(-1)
        return (1.0 - dcg / idcg).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
