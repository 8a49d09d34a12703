"""ListNet learning-to-rank scorer: a 3-layer ReLU MLP scores each of 30 candidate documents of a
query from 40 LETOR-style features (query-level min-max normalised to [0, 1]), trained with the
top-one softmax cross-entropy against softmax(2 * relevance grade), SGD + momentum 0.9. The team's
previous scorer was linear (as in the ListNet paper) and was happily trained at lr=1.0; the MLP kept
that lr instead of ~0.05. After a few steps of progress the oversized updates start throwing hidden
units' biases and weights far negative: the second hidden layer's ReLUs die one after another until
none is active for any document (and most of the first layer follows). From then on every document
of a query gets the same score, the predicted list distribution is uniform, no gradient reaches any
weight except the final bias (which cannot change a softmax), and the loss is frozen at exactly
log(30) = 3.401 for the rest of the run. No inf or NaN: a silent dead network."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "scorer.2"
SOURCE = ("ListNet (Cao et al. 2007, linear scorer) on LETOR features with QueryLevelNorm; lr kept when "
          "swapping the linear scorer for an MLP; dying ReLU under oversized SGD steps (Lu et al. 2019)")

NQ, ND, NF = 16, 30, 40


class ListScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scorer = nn.Sequential(nn.Linear(NF, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                    nn.Linear(32, 1))

    def forward(self, x):                  # [queries, docs, features]
        return self.scorer(x).squeeze(-1)  # [queries, docs]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4040 + seed)
    w_true = torch.randn(NF, generator=g)
    steps = 150
    batches = []
    for _ in range(steps):
        raw = torch.rand(NQ, ND, NF, generator=g) ** 2
        util = (raw - raw.mean(1, keepdim=True)) @ w_true + 0.3 * torch.randn(NQ, ND, generator=g)
        grade = torch.bucketize(util, torch.tensor([0.0, 1.0, 2.0, 3.0])).float()
        # query-level min-max normalisation -> features in [0, 1]
        lo, hi = raw.min(1, keepdim=True).values, raw.max(1, keepdim=True).values
        x = (raw - lo) / (hi - lo + 1e-6)
        batches.append((x, grade))
    model = ListScorer()
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 1.0, momentum=0.9)  # 1.0: linear-scorer lr

    def loss_fn(scores, grade):
        target = F.softmax(2.0 * grade, dim=-1)
        return -(target * F.log_softmax(scores, dim=-1)).sum(-1).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
