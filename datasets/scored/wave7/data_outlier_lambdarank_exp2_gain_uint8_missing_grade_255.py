"""Learning-to-rank for a product search engine: an MLP scores each (query, document) feature vector
and is trained with a DCG-weighted pairwise logistic loss (LambdaRank-style: every mis-ordered pair is
weighted by |2^rel_i - 2^rel_j|, the exponential gain of NDCG). Relevance grades are 0..4 and were
stored as uint8; one judged query that arrives mid-run (step 60) has a missing grade encoded with the
uint8 sentinel 255. Its exponential gain 2^255 overflows float32 to inf, the pair weight is inf and
the loss of that batch is inf; the backward pass fills the weights with NaN and training is dead for
good although every other query is clean. Fix: drop the corrupt query (filter grades outside 0..4)
from that batch; nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("LambdaRank/LambdaMART exponential gain 2^rel - 1 (Burges 2010); MSLR/Yahoo LETOR-style "
          "graded labels stored as uint8 with a 255 missing-value sentinel")

N_DOCS, N_FEAT = 20, 24


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_FEAT, 64)
        self.fc2 = nn.Linear(64, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, feats):                      # feats: (Q, L, F)
        h = F.relu(self.fc1(feats))
        h = F.relu(self.fc2(h))
        return self.out(h).squeeze(-1)            # (Q, L)


def dcg_weighted_pairwise_loss(scores, grades):
    gain = torch.pow(2.0, grades.float()) - 1.0                    # (Q, L)
    s_diff = scores.unsqueeze(2) - scores.unsqueeze(1)              # s_i - s_j
    g_diff = gain.unsqueeze(2) - gain.unsqueeze(1)
    better = (grades.unsqueeze(2) > grades.unsqueeze(1)).float()   # pairs with i more relevant than j
    weight = better * g_diff.abs()
    pair_loss = F.softplus(-s_diff)                                 # -log sigmoid(s_i - s_j)
    return (weight * pair_loss).sum() / better.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, q_per_batch = 150, 16
    w_true = torch.randn(N_FEAT, generator=g)
    batches = []
    for step in range(steps):
        feats = torch.randn(q_per_batch, N_DOCS, N_FEAT, generator=g)
        rel = feats @ w_true / N_FEAT ** 0.5 + 0.5 * torch.randn(q_per_batch, N_DOCS, generator=g)
        grades = torch.bucketize(rel, torch.tensor([-0.5, 0.5, 1.3, 2.0])).to(torch.uint8)  # 0..4
        if step == 60:
            grades[5, 3] = 255                     # missing judgement stored as the uint8 sentinel
            if fixed:                              # fix: filter queries with out-of-range grades
                keep = (grades <= 4).all(dim=1)
                feats, grades = feats[keep], grades[keep]
        batches.append((feats, grades))
    model = Scorer()
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=dcg_weighted_pairwise_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
