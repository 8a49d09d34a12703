"""lr_too_high on an LSTM language model (embedding -> LSTM -> linear, cross-entropy) trained with
Adam or RMSprop at a learning rate some 300-1000x too high.

Mechanism: a next-token model on a synthetic corpus drawn from a sparse second-order Markov chain
(the next token has a handful of likely values given the token two steps back, so a small LSTM
that carries one token of memory brings the loss well below log(vocab)). The optimizer is
configured with lr 1-3 (Adam) or 0.3-1 (RMSprop), some 300-1000x the sane ~3e-3 / 1e-3: every
normalised update moves each weight by ~lr, so the first few steps already change the embedding,
the LSTM gates and the output projection by amounts comparable to or larger than the weights
themselves (update/weight ratios of order 1 instead of ~1e-3). The gates saturate in arbitrary
states, the output logits grow large (the cross-entropy jumps to 10-100+ within a few steps, far
above log(vocab)) and the loss never settles below its starting value: the run diverges or
stalls.

ORIGIN is None: the fault is the optimizer configuration, not a module.
Fixed: the same model, data and optimizer with a sane learning rate (3e-3 for Adam, 1e-3 for
RMSprop).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Karpathy, 'A Recipe for Training Neural Networks' and 'char-rnn' issues on the loss "
    "exploding with too high a learning rate for Adam/RMSprop; PyTorch word_language_model "
    "forum threads where lr=1 (the SGD default of the example) is used with Adam and the "
    "perplexity blows up; fixed by lowering the lr to ~1e-3."
)


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(tokens))
        return self.decoder(h).flatten(0, 1)  # (batch * time, vocab)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    vocab = rng.choice([24, 32, 48])
    emb = rng.choice([16, 24, 32])
    hidden = rng.choice([32, 48, 64])
    layers = rng.choice([1, 2])
    seq = rng.choice([16, 24, 32])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([150, 200, 250])
    optim = rng.choice(["adam", "rmsprop"])
    if optim == "adam":
        lr = 3e-3 if fixed else rng.choice([1.0, 2.0, 3.0])
    else:
        lr = 1e-3 if fixed else rng.choice([0.3, 0.5, 1.0])

    # A sparse second-order chain: the next token depends on the token two steps back (3 likely
    # successors each), so the model must carry it in the LSTM state for one step.
    g = torch.Generator().manual_seed(11_000 + seed)
    trans = torch.full((vocab, vocab), 0.02 / vocab)
    for t in range(vocab):
        nxt = torch.randperm(vocab, generator=g)[:3]
        trans[t, nxt] += torch.tensor([0.6, 0.25, 0.13])
    trans = trans / trans.sum(dim=1, keepdim=True)
    batches = []
    for _ in range(steps):
        toks = [torch.randint(0, vocab, (batch,), generator=g) for _ in range(2)]
        for _ in range(seq - 1):
            toks.append(torch.multinomial(trans[toks[-2]], 1, generator=g).squeeze(1))
        s = torch.stack(toks, dim=1)
        batches.append((s[:, :-1].contiguous(), s[:, 1:].reshape(-1)))

    torch.manual_seed(seed)
    model = LSTMLanguageModel(vocab, emb, hidden, layers)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
