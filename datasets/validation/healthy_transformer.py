"""healthy (hard negative): a tiny transformer encoder classifier, AdamW with warmup and decay.

Nothing is wrong. Token and learned position embeddings feed one or two
``nn.TransformerEncoderLayer`` blocks (attention, LayerNorm, GELU feed-forward; pre- or post-norm
with the seed), then a mean pool and a linear head. The task: which of k token groups is the most
frequent in the sequence. AdamW's learning rate rises linearly over a warmup of 10-30 steps and
then decays linearly, as in the BERT/Hugging Face recipe, so the update size grows early on, the
attention softmax is near uniform at first and the loss may wobble while the lr climbs; then it
falls steadily. A detector that flags warmup, LayerNorm gains or attention scores is wrong here.

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
    "Vaswani et al. 2017 (the transformer encoder) trained with AdamW (Loshchilov & Hutter "
    "2019) and linear warmup then linear decay, as in BERT and Hugging Face's "
    "get_linear_schedule_with_warmup; a small nn.TransformerEncoder as in PyTorch's tutorials."
)


class TinyEncoder(nn.Module):
    def __init__(
        self, vocab: int, seq_len: int, dim: int, heads: int, layers: int, classes: int, pre: bool
    ) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(0.02 * torch.randn(seq_len, dim))
        layer = nn.TransformerEncoderLayer(
            dim,
            heads,
            dim_feedforward=2 * dim,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=pre,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.encoder(self.tok(ids) + self.pos)
        return self.head(self.norm(h.mean(dim=1)))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    dim = rng.choice([16, 24, 32])
    heads = rng.choice([2, 4])
    layers = rng.choice([1, 2])
    pre = rng.random() < 0.5
    classes = rng.choice([3, 4])
    vocab = classes * rng.choice([4, 6, 8])
    seq_len = rng.choice([8, 10, 12])
    batch = rng.choice([24, 32, 48])
    steps = rng.choice([100, 120, 150])
    peak_lr = rng.choice([1e-3, 2e-3, 3e-3])
    warmup = rng.choice([10, 20, 30])

    g = torch.Generator().manual_seed(210_000 + seed)
    group = torch.arange(vocab) % classes  # token -> group
    batches = []
    for _ in range(steps):
        # Each sequence favours one group, so the majority is usually (not always) clear.
        favour = torch.randint(0, classes, (batch, 1), generator=g)
        ids = torch.randint(0, vocab, (batch, seq_len), generator=g)
        swap = torch.rand(batch, seq_len, generator=g) < 0.35
        ids = torch.where(swap, ids - group[ids] + favour, ids)  # into the favoured group
        counts = nn.functional.one_hot(group[ids], classes).sum(dim=1).float()
        y = (counts + 1e-3 * torch.arange(classes)).argmax(dim=1)
        batches.append((ids, y))

    torch.manual_seed(seed)
    model = TinyEncoder(vocab, seq_len, dim, heads, layers, classes, pre)
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=0.01)

    def factor(i: int) -> float:
        if i < warmup:
            return (i + 1) / warmup
        return max(0.05, (steps - i) / max(1, steps - warmup))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    opt.register_step_post_hook(lambda *_: sched.step())  # scheduler steps after each step
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
