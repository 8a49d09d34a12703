"""healthy (hard negative): a fastText-style bag-of-words classifier with label smoothing and
heavy dropout, whose loss flattens early at a high floor.

Nothing is wrong. A topic classifier (``nn.EmbeddingBag`` mean of token embeddings, a hidden
layer with ReLU and dropout 0.5-0.6, a linear head) is trained with AdamW on cross-entropy with
label smoothing 0.2-0.3. The task is easy, so within the first 30-60 steps the model fits it;
from then on the loss cannot fall much further: label smoothing puts a floor under the
cross-entropy (the entropy of the smoothed target, about half of ln(C) here), and heavy dropout
keeps the per-step loss noisy around that floor. The long flat, noisy tail at a clearly non-zero
loss looks like a plateau, but the run has removed 20-45% of its starting loss and is converged.
A detector that calls any long flat tail a stall (dead units, saturation, vanishing gradients) is
wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Joulin et al. 2017, 'Bag of Tricks for Efficient Text Classification' (fastText: averaged "
    "word embeddings, a linear classifier), Szegedy et al. 2016 (label smoothing; "
    "nn.CrossEntropyLoss(label_smoothing=...)) and Srivastava et al. 2014 (dropout)."
)


class BagClassifier(nn.Module):
    def __init__(self, vocab: int, dim: int, hidden: int, classes: int, dropout: float) -> None:
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, hidden), nn.ReLU(),
                                 nn.Dropout(dropout))
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:  # tokens: (B, L) ids
        return self.head(self.mlp(self.embed(tokens)))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    vocab = rng.choice([300, 500, 800])
    dim = rng.choice([16, 32])
    hidden = rng.choice([32, 64])
    classes = rng.choice([4, 6, 8])
    length = rng.choice([12, 16, 24])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200, 250])
    dropout = rng.choice([0.5, 0.6])
    smoothing = rng.choice([0.2, 0.3])
    lr = rng.choice([2e-2, 3e-2])

    g = torch.Generator().manual_seed(400_000 + seed)
    # Each topic prefers its own block of "keywords"; the rest of a document is common words.
    topic_words = torch.randperm(vocab, generator=g)[: classes * 10].view(classes, 10)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        tokens = torch.randint(0, vocab, (batch, length), generator=g)
        keyed = torch.rand(batch, length, generator=g) < 0.5
        picks = topic_words[y][torch.arange(batch).unsqueeze(1),
                               torch.randint(0, 10, (batch, length), generator=g)]
        batches.append((torch.where(keyed, picks, tokens), y))

    torch.manual_seed(seed)
    model = BagClassifier(vocab, dim, hidden, classes, dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(label_smoothing=smoothing),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
