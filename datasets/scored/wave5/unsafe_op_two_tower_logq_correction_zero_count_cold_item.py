"""Two-tower retrieval model trained with in-batch sampled softmax and the logQ sampling-bias
correction (Yi et al. 2019): each in-batch item logit is reduced by log(q_item), where q_item is the
item's streaming frequency estimated from the counts seen so far in the training log.  The
correction is computed as torch.log(count / total) with no smoothing; the counts are warm-started
from the previous week's log.  For the first 100 steps only the established catalogue appears and
training is calm; at step 100 newly launched items start to
show up, their running count is still 0 when they first appear, log(0) = -inf, the corrected logit
is +inf and the in-batch softmax cross-entropy becomes inf/NaN.  Adding Laplace smoothing to the
frequency estimate ((count + 1) / (total + n_items)) is the only change in the fixed run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "logq"
SOURCE = ("Yi et al. 2019 'Sampling-Bias-Corrected Neural Modeling for Large Corpus Item "
          "Recommendations' (logQ correction with streaming frequency estimation); cold-start items "
          "with zero estimated frequency")

N_USERS, N_ITEMS, N_NEW, DIM = 500, 400, 40, 32
LAUNCH = 100


class LogQ(nn.Module):
    def __init__(self, smoothed):
        super().__init__()
        self.smoothed = smoothed

    def forward(self, counts, total):
        if self.smoothed:
            return torch.log((counts + 1.0) / (total + N_ITEMS))
        return torch.log(counts / total)


class TwoTower(nn.Module):
    def __init__(self, smoothed):
        super().__init__()
        self.user_emb = nn.Embedding(N_USERS, DIM)
        self.user_mlp = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))
        self.item_emb = nn.Embedding(N_ITEMS, DIM)
        self.item_mlp = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))
        self.logq = LogQ(smoothed)

    def forward(self, users, items, counts, total):
        u = F.normalize(self.user_mlp(self.user_emb(users)), dim=-1)
        v = F.normalize(self.item_mlp(self.item_emb(items)), dim=-1)
        return u @ v.T / 0.1 - self.logq(counts, total).unsqueeze(0)     # (B, B) corrected logits


def inbatch_ce(logits, _):
    return F.cross_entropy(logits, torch.arange(logits.shape[0]))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    pu = torch.randn(N_USERS, 8, generator=g)
    pi = torch.randn(N_ITEMS, 8, generator=g)
    pop = torch.randn(N_ITEMS, generator=g)
    steps, bs = 200, 128
    counts = torch.zeros(N_ITEMS)
    counts[:N_ITEMS - N_NEW] = torch.randint(5, 50, (N_ITEMS - N_NEW,), generator=g).float()   # warm start from last week's log
    batches = []
    for step in range(steps):
        n_avail = N_ITEMS - N_NEW if step < LAUNCH else N_ITEMS
        users = torch.randint(0, N_USERS, (bs,), generator=g)
        scores = pu[users] @ pi[:n_avail].T + 0.5 * pop[:n_avail]
        if step >= LAUNCH:
            scores[:, N_ITEMS - N_NEW:] += 1.0            # launch promotion for the new items
        items = torch.multinomial(torch.softmax(scores, -1), 1, generator=g).squeeze(1)
        c = counts[items].clone()                         # streaming estimate *before* this batch
        batches.append(((users, items, c, torch.tensor(float(counts.sum().clamp_min(1.0)))), items))
        counts.index_add_(0, items, torch.ones(bs))
    model = TwoTower(smoothed=fixed)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    return dict(model=model, optimizer=opt, loss_fn=inbatch_ce, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
