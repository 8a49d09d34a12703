"""Healthy: bag-of-words sentiment classifier - raw term counts over a 500-word vocabulary (documents
of 50-150 tokens, so counts up to ~10 and row sums ~100) into fc1 (500->64) -> F.relu -> fc2
(64->32) -> F.relu -> out, trained with Adam at lr=0.05. Three things look alarming: the inputs are
unnormalised counts; Adam's sign-like first update, multiplied by row sums of ~100, throws the loss
from log(2) to ~5-7 at step 1; and that same update, acting on non-negative inputs, switches off a
large share of the ReLUs for good (~30-50% of fc1's units and ~20-70% of fc2's never fire again on
any document). But sentiment here is carried by a small set of polar words, the surviving units are
more than enough to represent it, and the spike is gone within a few steps: the loss falls to
~0.01-0.05. Dead units are wasted capacity, not a failure. There is nothing to fix.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("bag-of-words / count-vectoriser MLP sentiment baselines (e.g. scikit-learn CountVectorizer + small "
          "PyTorch MLP tutorials); CS231n 'dying ReLU' notes - a fraction of dead units is common and benign")

VOCAB = 500


class BowMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(VOCAB, 64)
        self.fc2 = nn.Linear(64, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, counts):
        return self.out(F.relu(self.fc2(F.relu(self.fc1(counts)))))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    polarity = torch.randn(VOCAB, generator=g) * (torch.rand(VOCAB, generator=g) < 0.1)

    def sample(B):
        lens = torch.randint(50, 151, (B,), generator=g)
        y = torch.randint(0, 2, (B,), generator=g)
        X = torch.zeros(B, VOCAB)
        for i in range(B):
            p = torch.softmax(polarity * (2 * y[i] - 1), dim=0)
            ids = torch.multinomial(p, int(lens[i]), replacement=True, generator=g)
            X[i] = torch.bincount(ids, minlength=VOCAB).float()
        return X, y

    steps = 150
    batches = [sample(32) for _ in range(steps)]
    model = BowMLP()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
