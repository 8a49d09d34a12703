"""healthy: an LSTM language model with tied input/output embeddings; rare-token batches spike.

Mechanism: a small word-level LSTM language model (embedding, dropout-free one- or two-layer
LSTM, a projection back to the embedding size, and an output layer whose weight *is* the input
embedding, Press & Wolf 2017 / Inan et al. 2017 weight tying) is trained with Adam on a
synthetic corpus drawn from a sparse first-order Markov chain over the frequent part of the
vocabulary. A few batches in the middle of the run come from a different "document" that uses
the rare tail of the vocabulary (tokens the model has barely seen): the loss jumps there, the
shared embedding gets large gradients from both its input and its output use, and then the loss
goes straight back down on the next ordinary batches. Nothing is wrong: the spike is the data,
the tied weight receives two gradient contributions by design, and the run ends far below its
starting loss.

ORIGIN: None (healthy). Fixed: the same run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Tied input/output embeddings in word-level LSTM language models (Press & Wolf 2017; Inan "
    "et al. 2017; the PyTorch word_language_model example's --tied flag, AWD-LSTM); loss spikes "
    "on out-of-domain / rare-token batches that recover."
)


class TiedLSTMLM(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.proj = nn.Linear(hidden, emb)
        self.decoder = nn.Linear(emb, vocab)
        self.decoder.weight = self.embed.weight  # weight tying

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.rnn(self.embed(tokens))
        return self.decoder(self.proj(h)).flatten(0, 1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    vocab = rng.choice([48, 64, 80])
    emb = rng.choice([24, 32])
    hidden = rng.choice([32, 48])
    layers = rng.choice([1, 2])
    seq = rng.choice([12, 16, 20])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([110, 130, 150])
    lr = rng.choice([3e-3, 5e-3])
    n_spikes = rng.choice([2, 3])
    spike_steps = set(rng.sample(range(int(0.35 * steps), int(0.7 * steps)), n_spikes))

    g = torch.Generator().manual_seed(440_000 + seed)
    common = vocab * 3 // 4  # frequent tokens; the rest is the rare tail
    # Sparse Markov chain: each frequent token has 3 likely successors.
    succ = torch.randint(0, common, (common, 3), generator=g)
    rare = torch.arange(common, vocab)

    def sample(rows: int, length: int) -> torch.Tensor:
        out = torch.empty(rows, length + 1, dtype=torch.long)
        cur = torch.randint(0, common, (rows,), generator=g)
        for t in range(length + 1):
            out[:, t] = cur
            pick = succ[cur, torch.randint(0, 3, (rows,), generator=g)]
            noise = torch.randint(0, common, (rows,), generator=g)
            cur = torch.where(torch.rand(rows, generator=g) < 0.9, pick, noise)
        return out

    batches = []
    for step in range(steps):
        if step in spike_steps:  # a rare-token document
            idx = torch.randint(0, len(rare), (batch, seq + 1), generator=g)
            s = rare[idx]
        else:
            s = sample(batch, seq)
        batches.append((s[:, :-1], s[:, 1:].flatten()))

    torch.manual_seed(seed)
    model = TiedLSTMLM(vocab, emb, hidden, layers)
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
