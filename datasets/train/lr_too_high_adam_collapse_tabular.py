"""lr_too_high on a GELU/SiLU MLP classifier of standardised tabular data, trained with Adam or
AdamW at a learning rate copied from an SGD recipe (0.25-0.5 instead of ~1e-3): the run does not
blow up, it collapses to the label prior and stalls at the untrained loss ln(C).

Mechanism: a 3-4 layer MLP (no normalisation, GELU or SiLU, small init std 0.02-0.1, zero biases)
classifies 8-16 classes of Gaussian clusters (3 centres per class, features standardised). Adam's
first update moves every weight element by about lr whatever its gradient (m/sqrt(v) = sign(g) at
step 1), so with lr 0.25-0.5 and weights of size ~init_std the first step replaces each weight
matrix by sign noise: the measured step-0 update/weight norm ratio is 4.8 / 8.6 / 14 (seeds 0 / 1 /
2; a sane step is ~1e-2). The logits blow up and the loss overshoots for a few steps (peak 8.3e3 /
1.5e3 / 564 at step 2), then the hidden pre-activations of the deeper layers are driven to large
negative values (means of -40 to -230 at the end of the run, 77-100% of the units of at least one
layer below -3 for every input), where GELU/SiLU output ~0 with ~0 gradient. The logits no longer
depend on the input (their spread across a batch is ~0), only the output bias still learns, and it
learns the class frequencies: the loss returns to about ln(C) within ~15 steps and sits there for
the rest of the run, never below its starting value (no NaN). Measured plateau (mean of the last 10%
of steps) vs ln(C): 2.87 vs 2.77 (seed 0, AdamW, SiLU, lr 0.49), 2.04 vs 2.08 (seed 1, AdamW, GELU,
lr 0.43), 2.09 vs 2.08 (seed 2, AdamW, GELU, lr 0.30). The units are not dead because of the
activation: the same network with lr 1e-3 .. 3e-3 trains to 0.105 / 0.115 / 0.196 (seeds 0 / 1 / 2).

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
    "Known pattern of an Adam/AdamW learning rate copied from an SGD recipe (lr=0.1-0.5): PyTorch "
    "forum and Stack Overflow threads 'loss stuck at ln(num_classes)' / 'model predicts the same "
    "class for every input' with Adam(lr=0.1), answered by lowering the lr to ~1e-3; Karpathy, "
    "'A Recipe for Training Neural Networks' (Adam at 3e-4)."
)


class TabularMLP(nn.Module):
    def __init__(self, d_in: int, hidden: int, depth: int, n_classes: int, init_std: float,
                 act: str) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = d_in
        for _ in range(depth):
            layers.append(nn.Linear(width, hidden))
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
    hidden = rng.choice([64, 96, 128])
    depth = rng.choice([3, 4])
    init_std = rng.choice([0.02, 0.05, 0.1])
    batch = rng.choice([64, 96, 128])
    steps = rng.choice([150, 200, 250])
    optim = rng.choice(["adam", "adamw"])
    sgd_lr = math.exp(rng.uniform(math.log(0.25), math.log(0.5)))
    act = rng.choice(["gelu", "silu"])
    lr = rng.choice([1e-3, 2e-3, 3e-3]) if fixed else sgd_lr

    g = torch.Generator().manual_seed(23_000 + seed)
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
    model = TabularMLP(d_in, hidden, depth, n_classes, init_std, act)
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
