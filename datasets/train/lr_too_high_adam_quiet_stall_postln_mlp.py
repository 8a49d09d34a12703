"""lr_too_high, quiet variant: a deep post-LayerNorm GELU/SiLU MLP on standardised tabular data,
trained with Adam or AdamW at a learning rate copied from an SGD recipe (0.1-0.2 instead of
~1e-3). Nothing overflows and the loss never climbs far: the run just sits at the label prior,
loss ~ln(C), for its whole length.

Model: 8-9 blocks of Linear -> LayerNorm -> GELU (or SiLU), hidden width 32-40, then a Linear
head, with a transformer-style small init (weights N(0, 0.02), zero biases). Data: 8-16 classes of
Gaussian clusters (3 centres per class), features standardised.

Mechanism: Adam's first update moves every weight element by about lr whatever its gradient
(m/sqrt(v) = sign(g) at step 1), so with lr 0.1-0.2 and weights of size 0.02 the first step
replaces every weight matrix by sign noise. Measured step-0 update/weight norm ratio (median over
the weight matrices): 9.4 / 7.9 / 5.9 for seeds 0 / 1 / 2 (the fixed run: 0.05-0.15). A deep stack
of *random* Linear -> LayerNorm -> GELU blocks is contracting: GELU/SiLU outputs carry a large
input-independent positive mean, a random matrix maps that common part to one fixed direction, and
LayerNorm rescales whatever is left, so the input-dependent part of the representation shrinks by
a roughly constant factor per block. At the end of the run the spread across a batch of the
LayerNorm outputs falls from ~0.7 in the first block to 6e-7 / 1e-5 / 4e-6 in the last (seeds
0 / 1 / 2) and the logits' spread across inputs is 1e-7 .. 1e-6 (fixed run: ~0.9 in every block,
logit spread 1.6-2.0). The head sees the same vector for every input, the gradient that would
re-align the early weights is washed out on the way down while Adam at this lr keeps re-scrambling
them, and only the head's bias learns: it learns the class frequencies. The LayerNorms keep every
activation and the logits bounded, so there is no blow-up and no NaN: peak loss / first loss is
2.00 / 1.35 / 1.27 (reached at step 2-3), the total gradient norm stays ordinary (max over steps /
step 0: 2.4 / 1.9 / 1.4), and the loss is back near the prior within ~10 steps. Plateau (mean of the
last 10% of steps) vs ln(C): 2.789 vs 2.773 (seed 0, AdamW, SiLU, depth 9, lr 0.189), 2.105 vs
2.079 (seed 1, AdamW, GELU, depth 8, lr 0.157), 2.088 vs 2.079 (seed 2, AdamW, GELU, depth 9,
lr 0.119). The same network, init, data and optimizer with lr 1e-3 .. 3e-3 trains to 0.365 /
0.216 / 0.529 (last-10% mean; seeds 0 / 1 / 2).

ORIGIN is None: the fault is an optimizer hyper-parameter, not a module.
Fixed: the same model, init, data and optimizer (Adam / AdamW) with lr 1e-3, 2e-3 or 3e-3.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Known pattern of an Adam/AdamW learning rate copied from an SGD recipe (lr=0.1): PyTorch "
    "forum and Stack Overflow threads 'loss stuck at ln(num_classes) from the first epoch, no "
    "NaN' / 'model predicts the class prior for every input' with Adam(lr=0.1) on a normalised "
    "network, answered by lowering the lr to ~1e-3; Kingma & Ba 2015 (Adam's step is ~lr per "
    "element regardless of the gradient scale); Karpathy, 'A Recipe for Training Neural "
    "Networks' (Adam at 3e-4)."
)


class PostLNMLP(nn.Module):
    def __init__(self, d_in: int, hidden: int, depth: int, n_classes: int, init_std: float,
                 act: str) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = d_in
        for _ in range(depth):
            layers.append(nn.Linear(width, hidden))
            layers.append(nn.LayerNorm(hidden))
            layers.append(nn.GELU() if act == "gelu" else nn.SiLU())
            width = hidden
        layers.append(nn.Linear(width, n_classes))
        self.net = nn.Sequential(*layers)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=init_std)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([16, 24, 32])
    n_classes = rng.choice([8, 10, 12, 16])
    hidden = rng.choice([32, 40])
    depth = rng.choice([8, 9])
    init_std = 0.02
    batch = rng.choice([64, 96, 128])
    steps = rng.choice([150, 200, 250])
    optim = rng.choice(["adam", "adamw"])
    sgd_lr = math.exp(rng.uniform(math.log(0.1), math.log(0.2)))
    act = rng.choice(["gelu", "silu"])
    lr = rng.choice([1e-3, 2e-3, 3e-3]) if fixed else sgd_lr

    g = torch.Generator().manual_seed(47_000 + seed)
    # Gaussian clusters: a few centres per class in d_in dims, then standardised.
    per_class = 3
    centres = torch.randn(n_classes * per_class, d_in, generator=g) * 1.5
    n = steps * batch
    comp = torch.randint(0, n_classes * per_class, (n,), generator=g)
    x = centres[comp] + torch.randn(n, d_in, generator=g)
    y = comp % n_classes
    x = (x - x.mean(0)) / x.std(0)
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]

    torch.manual_seed(seed)
    model = PostLNMLP(d_in, hidden, depth, n_classes, init_std, act)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
