"""lr_too_high on an embedding + 1-D convolution text classifier (Kim-style TextCNN) trained with
Adam or RMSprop at a learning rate copied from an SGD recipe: the run does not blow up, it
collapses to the label prior and stalls at the untrained loss ln(C).

Mechanism: token sequences (vocab 64-128, length 24-32) whose class (4-8 classes) is given by which
key tokens appear (each class owns 2-3 key tokens, 1-4 occurrences among filler tokens); the model
is Embedding -> 2-3 x (Conv1d + GELU/SiLU) -> global max pool over time -> Linear, with a small
init (std 0.02-0.1). The optimizer is Adam at lr 0.25-0.5 or RMSprop at lr 0.05-0.2 instead of
~1e-3. Both normalise the gradient, so the first update moves every weight element by ~lr (Adam)
or ~10 lr (RMSprop, whose square average starts at 0.01 g^2) whatever its gradient: the measured
step-0 update/weight norm ratio is 12 / 22 / 15 (seeds 0 / 1 / 2) for every layer. The loss spikes
at step 1 (6.0e3 / 1.3e3 / 3.2e4) and is back near ln(C) by step 2-3: the pre-activations of the
last convolution have been driven to large negative values (means of -2e3 to -4e5, every channel
below -3 at every position) where GELU/SiLU output ~0 with ~0 gradient, so the pooled features and
the logits no longer depend on the tokens, only the head bias learns and it learns the class
frequencies. The loss sits at the prior for the rest of the run, never below its starting value
(no NaN). Measured plateau (mean of the last 10% of steps) vs ln(C): 1.792 vs 1.792 (seed 0,
RMSprop, SiLU, lr 0.061), 2.12 vs 2.08 (seed 1, Adam, SiLU, lr 0.46), 1.394 vs 1.386 (seed 2,
RMSprop, GELU, lr 0.15). The activation is not the cause: the same network at lr 1e-3 .. 3e-3
trains to 0.002 / 0.57 / 0.000 (seeds 0 / 1 / 2).

ORIGIN is None: the fault is an optimizer hyper-parameter, not a module.
Fixed: the same model, init, data and optimizer (Adam / RMSprop) with lr 1e-3, 2e-3 or 3e-3.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Known pattern of porting a Kim (2014) CNN-for-sentence-classification recipe to Adam/RMSprop "
    "while keeping an SGD/Adadelta-sized learning rate (0.05-0.5): reports of TextCNN training "
    "'stuck at 1/num_classes accuracy, loss constant at ln(num_classes)', fixed by using Adam's "
    "~1e-3; Karpathy, 'A Recipe for Training Neural Networks'."
)


class TextCNN(nn.Module):
    def __init__(self, vocab: int, emb: int, channels: int, kernel: int, n_conv: int,
                 n_classes: int, act: str, init_std: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        convs: list[nn.Module] = []
        width = emb
        for _ in range(n_conv):
            convs.append(nn.Conv1d(width, channels, kernel, padding=kernel // 2))
            convs.append(nn.GELU() if act == "gelu" else nn.SiLU())
            width = channels
        self.convs = nn.Sequential(*convs)
        self.head = nn.Linear(channels, n_classes)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Conv1d, nn.Embedding)):
                nn.init.normal_(m.weight, std=init_std)
            if isinstance(m, (nn.Linear, nn.Conv1d)):
                nn.init.zeros_(m.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.convs(self.embed(tokens).transpose(1, 2))  # (batch, channels, time)
        return self.head(h.amax(dim=2))  # global max pool over time


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    vocab = rng.choice([64, 96, 128])
    n_classes = rng.choice([4, 6, 8])
    keys_per_class = rng.choice([2, 3])
    seq = rng.choice([24, 32])
    emb = rng.choice([16, 24, 32])
    channels = rng.choice([32, 48])
    kernel = rng.choice([3, 5])
    n_conv = rng.choice([2, 3])
    act = rng.choice(["gelu", "silu"])
    init_std = rng.choice([0.02, 0.05, 0.1])
    batch = rng.choice([32, 48])
    steps = rng.choice([150, 200])
    optim = rng.choice(["adam", "rmsprop"])
    if optim == "adam":
        sgd_lr = math.exp(rng.uniform(math.log(0.25), math.log(0.5)))
    else:
        sgd_lr = math.exp(rng.uniform(math.log(0.05), math.log(0.2)))
    lr = rng.choice([1e-3, 2e-3, 3e-3]) if fixed else sgd_lr

    # Key tokens 0 .. n_classes * keys_per_class - 1 (class = key // keys_per_class); every other
    # token is filler. A sequence holds 1-4 occurrences of the keys of its class among fillers.
    g = torch.Generator().manual_seed(31_000 + seed)
    n_keys = n_classes * keys_per_class
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_classes, (batch,), generator=g)
        x = torch.randint(n_keys, vocab, (batch, seq), generator=g)
        for _ in range(3):
            pos = torch.randint(0, seq, (batch,), generator=g)
            key = y * keys_per_class + torch.randint(0, keys_per_class, (batch,), generator=g)
            keep = torch.rand(batch, generator=g) < 0.6
            x[torch.arange(batch), pos] = torch.where(keep, key, x[torch.arange(batch), pos])
        pos = torch.randint(0, seq, (batch,), generator=g)  # at least one key per sequence
        key = y * keys_per_class + torch.randint(0, keys_per_class, (batch,), generator=g)
        x[torch.arange(batch), pos] = key
        batches.append((x, y))

    torch.manual_seed(seed)
    model = TextCNN(vocab, emb, channels, kernel, n_conv, n_classes, act, init_std)
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
