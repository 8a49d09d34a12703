"""Review sentiment classifier trained on soft labels: each review's target is the fraction of
annotators who marked it positive, p = up / (up + down), computed in the data pipeline; the model
is embedding -> masked mean -> F.relu(fc) -> logit with BCE-with-logits on the soft target, AdamW.
One review in the 70th batch was never shown to any annotator (up = down = 0), so its target is
0/0 = NaN. Nothing fails at data-loading time; at that step the batch loss is NaN, backward fills
every gradient with NaN, and AdamW writes NaN into all weights, so every later loss is NaN too.
Fix: filter out reviews with zero votes before batching (nothing else changes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("crowd-sourced soft labels (vote fractions) with unannotated items giving 0/0 = NaN targets; "
          "'BCEWithLogitsLoss returns nan after some iterations' forum threads traced to a NaN label")

VOCAB, T = 300, 40
BAD_STEP = 70


class ReviewSentiment(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.fc = nn.Linear(32, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, ids, mask):
        m = mask.float().unsqueeze(-1)
        pooled = (self.embed(ids) * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.out(F.relu(self.fc(pooled))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    polarity = torch.randn(VOCAB, generator=g) * (torch.rand(VOCAB, generator=g) < 0.2)
    polarity[0] = 0.0

    def sample(n, step):
        lens = torch.randint(8, T + 1, (n,), generator=g)
        ids = torch.randint(1, VOCAB, (n, T), generator=g)
        mask = torch.arange(T)[None] < lens[:, None]
        ids = ids * mask
        score = (polarity[ids] * mask).sum(1) / mask.sum(1).sqrt()
        n_votes = torch.randint(3, 20, (n,), generator=g)
        if step == BAD_STEP:
            n_votes[7] = 0
        up = torch.binomial(n_votes.float(), torch.sigmoid(6.0 * score), generator=g)
        down = n_votes.float() - up
        target = up / (up + down)
        return ids, mask, target

    steps, B = 250, 32
    batches = []
    for step in range(steps):
        ids, mask, target = sample(B, step)
        if fixed:
            keep = ~torch.isnan(target)
            ids, mask, target = ids[keep], mask[keep], target[keep]
        batches.append(((ids, mask), {"p_positive": target}))

    model = ReviewSentiment()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, y: F.binary_cross_entropy_with_logits(out, y["p_positive"]),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
