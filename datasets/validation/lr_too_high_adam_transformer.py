"""lr_too_high on a tiny pre-LN transformer encoder regressor trained with Adam or AdamW.

Mechanism: token embeddings plus learned positions, one or two pre-LN
``nn.TransformerEncoderLayer`` blocks (d_model 32-64, 4 heads, seq 8-16, no dropout), mean pooling
and a linear head, trained with MSE to read a sequence score that the same model learns in about a
hundred steps at lr 2e-3 - 3e-3. Here the peak lr is 100-300x that (0.2-0.9). Adam's step is about
lr per parameter whatever the gradient scale, so every weight moves by far more than its own size
per step: the updates overshoot, the feed-forward and attention weights grow, and in pre-LN blocks
the residual stream (normalised only on the way into each sublayer, never on the way out) grows
with them, so the pooled features and the head's output swing by orders of magnitude from step to
step. The loss climbs far above its start (typically 1e2-1e8x; it stays finite in these short
runs). Some seeds warm the lr up linearly over 10-40 steps, so the step at which it breaks moves.
(The same lrs on post-LN blocks, whose outputs are renormalised, mostly just plateau: pre-LN is the
configuration where too high an lr shows as a clear divergence.)

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
    "Transformer training instability at high learning rates (Liu et al. 2020, 'Understanding "
    "the Difficulty of Training Transformers'; Wortsman et al. 2023, 'Small-scale proxies for "
    "large-scale Transformer training instabilities': attention-logit growth and divergence when "
    "the Adam lr is too high) and the PyTorch forum pattern 'transformer loss explodes / goes NaN "
    "with Adam lr 1e-1'; lowering the lr fixes it."
)


class TinyTransformer(nn.Module):
    """Pre-LN (GPT-2 style) encoder blocks, mean pooling, a linear head; no final LayerNorm."""

    def __init__(self, vocab: int, seq_len: int, d_model: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(seq_len, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead=4,
            dim_feedforward=2 * d_model,
            dropout=0.0,
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.encoder(self.embed(tokens) + self.pos)
        return self.head(h.mean(dim=1))


def _data(seed: int, steps: int, batch: int, seq_len: int, vocab: int) -> list:
    """Each token id carries a hidden score; the target is the standardised sum of the scores of
    the tokens in the sequence, plus a little noise."""
    g = torch.Generator().manual_seed(160_000 + seed)
    score = torch.randn(vocab, generator=g)
    batches = []
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (batch, seq_len), generator=g)
        y = score[tokens].sum(dim=1, keepdim=True) / seq_len**0.5
        batches.append((tokens, y + 0.1 * torch.randn(batch, 1, generator=g)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_model = rng.choice([32, 48, 64])
    layers = rng.choice([1, 2])
    seq_len = rng.choice([8, 12, 16])
    vocab = rng.choice([16, 24, 32])
    batch = rng.choice([16, 32])
    steps = rng.choice([80, 100, 120])
    sane_lr = rng.choice([2e-3, 3e-3])
    factor = rng.choice([100, 150, 300])
    warmup = rng.choice([0, 10, 25, 40])
    adamw = rng.choice([False, True])

    torch.manual_seed(seed)
    model = TinyTransformer(vocab, seq_len, d_model, layers)
    lr = sane_lr if fixed else sane_lr * factor
    if adamw:
        opt: torch.optim.Optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    if warmup:
        # Linear warmup to the peak; the scheduler steps after each optimizer step.
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
        opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, seq_len, vocab),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
