"""ListNet learning-to-rank: an MLP scores each (query, document) feature vector and the loss is the
cross-entropy between softmax(relevance labels) and softmax(scores) over each query's list.  One
feature is log(PageRank); for one mid-run query a freshly discovered page has PageRank exactly 0,
so the feature row contains log(0) = -inf.  The first Linear turns it into +-inf, the list softmax
becomes NaN and the loss is NaN from that step on.  Fixed: the corrupt row is filtered (the -inf
is clamped to the feature's floor), all other data identical."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "scorer.0"
SOURCE = "LETOR / MSLR-style feature pipelines: log(PageRank)=-inf for uncrawled pages poisoning ListNet training"


class ListNetScorer(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.scorer = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):  # x: (queries, docs, features) -> scores (queries, docs)
        return self.scorer(x).squeeze(-1)


def listnet_loss(scores, rel):
    return -(torch.softmax(rel, -1) * torch.log_softmax(scores, -1)).sum(-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    hidden, q_per_batch, docs, steps, bad_step = [(32, 16, 10, 80, 37), (48, 12, 12, 100, 55), (24, 20, 8, 60, 21)][seed % 3]
    n_feat = 12
    model = ListNetScorer(n_feat, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    w = torch.randn(n_feat, generator=g)
    batches = []
    for step in range(steps):
        x = torch.randn(q_per_batch, docs, n_feat, generator=g)
        log_pr = torch.randn(q_per_batch, docs, generator=g) - 2.0
        x[..., 0] = log_pr
        rel = (x @ w + 0.3 * torch.randn(q_per_batch, docs, generator=g)).clamp(-3, 3).round() + 3
        if step == bad_step:
            x[3, 1, 0] = -3.5 if fixed else float("-inf")  # PageRank == 0 -> log(0)
        batches.append((x, rel))
    return dict(model=model, optimizer=opt, loss_fn=listnet_loss, batches=batches, steps=steps, amp_dtype=None, scaler=None)
