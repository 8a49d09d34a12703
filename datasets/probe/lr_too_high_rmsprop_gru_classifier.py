"""lr_too_high: a bidirectional GRU text classifier trained with RMSprop at a far too high lr.

Mechanism: token embeddings, a one-layer bidirectional ``nn.GRU`` (the last forward state and the
first backward state concatenated), and a linear head, trained with cross-entropy to classify
short token sequences (a topic / intent classifier: each class has a few keyword tokens that
appear among common filler tokens). At a sane RMSprop lr (2e-3 - 3e-3) it learns the task in
a few dozen steps. Here the lr is 100-200x that (0.2-0.6). RMSprop divides each gradient by the
root of its running mean square, so every step moves every parameter by about lr whatever the
gradient's scale, and on the first steps, while that running mean is still warming up from 0
(alpha 0.99), by up to 10x lr: the embeddings, the GRU's gate weights and the head's weights jump
by several times their own size per step. The GRU's gates saturate, its states are pushed
towards +-1 and stop carrying the input, and the head's weights keep growing, so the logits
swing by tens from step to step and the loss climbs far above log(classes) instead of falling
(it stays finite: the GRU bounds the states, so this is a divergence of the loss, not an
overflow). Some seeds warm the lr up linearly
over 5-20 steps, which moves the step where it breaks.
Seeds change the vocabulary, the widths, the sequence length, the number of classes, the batch
size, the lr multiple and the warmup.

ORIGIN is None: the cause is the optimizer's configuration, shared by every layer, not a module.
Fixed: the same run at the sane learning rate (the peak divided by the same factor).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "PyTorch forum / Stack Overflow threads 'LSTM/GRU classifier loss increases / accuracy stuck "
    "at chance with RMSprop lr=0.1' (RMSprop's default lr is 1e-2 in PyTorch, 1e-3 in Keras, and "
    "Hinton's lecture 6e recommends small steps), fixed by lowering the learning rate."
)


class BiGRUClassifier(nn.Module):
    def __init__(self, vocab: int, dim: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.embed(ids))
        hidden = out.shape[-1] // 2
        h = torch.cat([out[:, -1, :hidden], out[:, 0, hidden:]], dim=1)
        return self.head(h)


def _data(seed: int, steps: int, batch: int, vocab: int, seq: int, classes: int) -> list:
    """Filler tokens plus 2-3 keywords of the sequence's class at random positions."""
    g = torch.Generator().manual_seed(350_000 + seed)
    n_kw = 4
    keywords = torch.arange(classes * n_kw).view(classes, n_kw)  # the first ids are keywords
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        ids = torch.randint(classes * n_kw, vocab, (batch, seq), generator=g)
        for _k in range(3):
            pos = torch.randint(0, seq, (batch,), generator=g)
            kw = keywords[y, torch.randint(0, n_kw, (batch,), generator=g)]
            ids[torch.arange(batch), pos] = kw
        batches.append((ids, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    vocab = rng.choice([100, 200, 300])
    dim = rng.choice([16, 24, 32])
    hidden = rng.choice([24, 32, 48])
    seq = rng.choice([10, 12, 16])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 64])
    steps = rng.choice([100, 120, 150])
    sane_lr = rng.choice([2e-3, 3e-3])
    factor = rng.choice([100, 150, 200])
    warmup = rng.choice([0, 5, 10, 20])
    peak = sane_lr if fixed else sane_lr * factor

    batches = _data(seed, steps, batch, vocab, seq, classes)
    torch.manual_seed(seed)
    model = BiGRUClassifier(vocab, dim, hidden, classes)
    opt = torch.optim.RMSprop(model.parameters(), lr=peak, alpha=0.99)
    if warmup:
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
        opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
