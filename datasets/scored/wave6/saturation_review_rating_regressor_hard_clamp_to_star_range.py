"""Review star-rating regressor (1-10 scale, IMDB-style): masked mean of word embeddings ->
fc -> F.relu -> head, trained with MSE and Adam. Because valid ratings lie in [1, 10], the author
bounds the prediction inside forward with torch.clamp(pred, 1, 10) (module rating_range), a
hard-saturating activation. At initialisation the head outputs values of about 0 +- 0.05 (never
above ~0.3), i.e. below the lower bound for every review, so the clamp returns the constant 1.0
and its gradient is exactly zero for the whole batch, every batch: no parameter ever receives a
gradient, Adam never moves, and the loss stays at mean((y - 1)^2) ~ 20-30 (varying only with the
batch) for the entire run - no NaN, no spike. Fix: a bounded output that is not saturated at
init, 1 + 9 * sigmoid(pred) (smooth, gradient everywhere); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "rating_range"
SOURCE = ("rating-prediction code that clamps outputs to the valid star range during training "
          "(torch.clamp has zero gradient outside [min, max]); 'loss does not change at all' forum reports; "
          "recommender tutorials that use min + (max-min)*sigmoid(x) instead")

VOCAB, T = 300, 50


class RatingRange(nn.Module):
    def __init__(self, lo, hi, smooth):
        super().__init__()
        self.lo, self.hi, self.smooth = lo, hi, smooth

    def forward(self, z):
        if self.smooth:
            return self.lo + (self.hi - self.lo) * torch.sigmoid(z)
        return torch.clamp(z, self.lo, self.hi)


class RatingRegressor(nn.Module):
    def __init__(self, smooth):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.fc = nn.Linear(32, 32)
        self.head = nn.Linear(32, 1)
        self.rating_range = RatingRange(1.0, 10.0, smooth)

    def forward(self, ids, mask):
        m = mask.float().unsqueeze(-1)
        pooled = (self.embed(ids) * m).sum(1) / m.sum(1)
        return self.rating_range(self.head(F.relu(self.fc(pooled))).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    polarity = torch.randn(VOCAB, generator=g) * (torch.rand(VOCAB, generator=g) < 0.2)

    def sample(B):
        lens = torch.randint(10, T + 1, (B,), generator=g)
        ids = torch.randint(1, VOCAB, (B, T), generator=g)
        mask = torch.arange(T)[None] < lens[:, None]
        ids = ids * mask
        score = (polarity[ids] * mask).sum(1) / mask.sum(1).float().sqrt()
        rating = (5.5 + 4.5 * score + 0.5 * torch.randn(B, generator=g)).round().clamp(1, 10)
        return (ids, mask), rating

    steps = 200
    batches = [sample(32) for _ in range(steps)]
    model = RatingRegressor(smooth=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
