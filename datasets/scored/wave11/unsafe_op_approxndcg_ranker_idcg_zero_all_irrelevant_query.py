"""Listwise learning-to-rank MLP trained by directly maximising ApproxNDCG (Qin et al.): each
document's rank is approximated with sigmoids of score differences and the loss is 1 - DCG/IDCG per
query. The hand-written normaliser divides by IDCG without a guard. LETOR-style query logs contain a
few queries for which no candidate document is relevant at all (all grades 0); for such a query both
DCG and IDCG are exactly 0, the per-query NDCG is 0/0 = NaN, the mean loss is NaN and the backward
pass writes NaN into every weight. The run is calm until the first such query is sampled mid-run.
Clamping IDCG away from zero (so that query simply contributes a constant) fixes it."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None  # the 0/0 is born in the hand-written NDCG normaliser of the loss, not in a layer
SOURCE = ("ApproxNDCG / NeuralNDCG implementations (allRank, TF-Ranking) mask or eps-guard queries with "
          "IDCG = 0; MSLR-WEB/LETOR datasets contain queries whose documents are all graded 0")

NQ, ND, NF = 16, 20, 24


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(NF, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):               # x: [queries, docs, features]
        return self.net(x).squeeze(-1)  # scores: [queries, docs]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    w_true = torch.randn(NF, generator=g)
    steps = 160
    batches = []
    for _ in range(steps):
        x = torch.randn(NQ, ND, NF, generator=g)
        util = x @ w_true / math.sqrt(NF) + 0.3 * torch.randn(NQ, ND, generator=g)
        grade = torch.bucketize(util, torch.tensor([0.3, 0.9, 1.4, 1.9])).float()  # grades 0..4
        # rare queries with no relevant candidate at all (every document graded 0)
        empty = torch.rand(NQ, generator=g) < 0.0012
        grade[empty] = 0.0
        batches.append((x, grade))
    model = Scorer()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    alpha = 10.0
    disc = 1.0 / torch.log2(torch.arange(ND, dtype=torch.float32) + 2.0)

    def loss_fn(scores, grade):
        gains = 2.0 ** grade - 1.0
        diff = scores.unsqueeze(1) - scores.unsqueeze(2)            # s_j - s_i  [q, i, j]
        approx_rank = 0.5 + torch.sigmoid(alpha * diff).sum(-1)      # ~1 + #docs scored above i
        dcg = (gains / torch.log2(1.0 + approx_rank)).sum(-1)
        ideal = torch.sort(gains, dim=-1, descending=True).values
        idcg = (ideal * disc).sum(-1)
        if fixed:
            idcg = idcg.clamp_min(1e-6)
        return (1.0 - dcg / idcg).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
