"""healthy (hard negative): a GRU sequence classifier with one loss spike that recovers.

Nothing is wrong with the model or the optimizer. At a seed-dependent step one batch comes from a
mislabelled shard (its labels are shuffled, its inputs are ordinary), so the loss jumps for that
step, the update is a little off, and training recovers within a few steps. The inputs of that
batch have the usual scale: it is not a corrupt-value outlier, and nothing goes non-finite.

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
    "Loss spikes that recover on their own, as reported for noisy or mislabelled shards in "
    "large-scale training (e.g. the PaLM paper's discussion of loss spikes, Chowdhery et al. "
    "2022); here on a small GRU classifier in the style of PyTorch's sequence tutorials."
)


class GRUClassifier(nn.Module):
    def __init__(self, d_in: int, hidden: int, layers: int, classes: int) -> None:
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    hidden = rng.choice([16, 24, 32])
    layers = rng.choice([1, 2])
    seq_len = rng.choice([8, 12, 16])
    d_in = rng.choice([4, 6, 8])
    classes = rng.choice([3, 4])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([3e-3, 5e-3, 1e-2])
    spike_step = rng.randrange(int(0.4 * steps), int(0.7 * steps))

    g = torch.Generator().manual_seed(120_000 + seed)
    protos = torch.randn(classes, d_in, generator=g)
    batches = []
    for step in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        # The class is signalled by a prototype added at a few random time steps, in noise.
        x = 0.8 * torch.randn(batch, seq_len, d_in, generator=g)
        mask = (torch.rand(batch, seq_len, 1, generator=g) < 0.3).float()
        x = x + mask * protos[y].unsqueeze(1)
        if step == spike_step:
            y = y[torch.randperm(batch, generator=g)]
        batches.append((x, y))

    torch.manual_seed(seed)
    model = GRUClassifier(d_in, hidden, layers, classes)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
