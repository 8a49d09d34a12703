"""lr_too_high on a small ReLU MLP-Mixer image classifier trained with Adam / AdamW at a learning
rate copied from an SGD recipe (0.2-0.6 instead of ~1e-3): the loss overshoots to 20-70, and the
ReLUs that the overshoot drives negative never fire again, so the run sits at chance.

Mechanism: an MLP-Mixer (4x4 patch embedding, 2-4 pre-LayerNorm blocks whose token-mixing and
channel-mixing MLPs use ReLU, mean pooling, a Linear-ReLU-Linear head) classifies 6-10 classes of
smooth random templates under noise. Adam's update is m / sqrt(v), about +-1 per element on the
first steps whatever the gradient's size, so every weight moves by ~lr per step: with lr 0.2-0.6
and weights of size ~0.1 each step replaces a layer by sign noise (update / weight norm ratios of
0.4-7 on the first steps; a sane one is ~1e-3 to 1e-2). The logits overshoot, the loss climbs to
20-70 with gradient norms of 30-60, and the large coherent steps on the head's first Linear (and
on the channel-MLP biases) push the head's hidden ReLU pre-activations below zero for every
input: the head ReLU is 100% dead, many channel-MLP units (up to 100% in one block) are dead as
well, the logits no longer depend on the image and only the output bias learns the class prior.
The loss sits at about ln(C) for the rest of the run. The residual stream and LayerNorm keep the
token-mixing units alive, but nothing behind a dead head can reach the loss. The same network,
data and schedule with a sane lr keeps its units alive and trains to ~0.02-0.08.

Seeds vary the mechanism (seed % 3) as well as the sizes:
  * 0: Adam, constant lr 0.2-0.4 (sane 1e-3 / 2e-3). The step-0 update is 7x the weight norm,
    the loss peaks at 55 (step 3, gradient norm 59), the head ReLU is fully dead from step 17.
  * 1: AdamW with OneCycleLR(max_lr=0.3-0.6), the super-convergence schedule of an SGD recipe
    (sane max_lr 2e-3 / 3e-3). The run first learns (loss 2.1 -> 1.3) while the lr ramps up;
    near the peak (step 43, lr ~0.4) the loss jumps to 72 with a gradient norm of 63, the head
    ReLU is dead from step 51, and the annealing second half of the cycle cannot revive it.
  * 2: Adam with a short linear warmup (5-10 steps) to a constant lr 0.3-0.5 (sane 1e-3 /
    2e-3). The loss overshoots to 22 at step 8; the head ReLU is dead from step 6 on (a few
    units flicker back on single batches, without effect).
Measured (mean loss of the last 10% of steps, unfixed vs fixed; no run goes non-finite): seed 0
2.09 vs 0.019 (ln 8 = 2.08), seed 1 2.09 vs 0.081 (ln 8), seed 2 2.11 vs 0.054 (ln 8).

ORIGIN is None: the fault is the optimizer's learning rate, shared by every layer, not a module.
Fixed: the same model, init, data, optimizer and schedule with the sane (peak) learning rate.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Known pattern of an SGD learning rate (0.1-1, or a OneCycle max_lr from a super-convergence "
    "recipe) reused with Adam/AdamW: PyTorch forum / Stack Overflow threads 'loss explodes then "
    "stays at ln(num_classes), model predicts one class' answered by lr ~1e-3; CS231n notes on "
    "dying ReLUs after a too-large update ('as much as 40% of your network can be dead'); "
    "Karpathy, 'A Recipe for Training Neural Networks' (Adam at 3e-4)."
)


class MixerBlock(nn.Module):
    def __init__(self, tokens: int, dim: int, token_hidden: int, channel_hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(
            nn.Linear(tokens, token_hidden), nn.ReLU(), nn.Linear(token_hidden, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(
            nn.Linear(dim, channel_hidden), nn.ReLU(), nn.Linear(channel_hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class Mixer(nn.Module):
    def __init__(self, c_in: int, size: int, patch: int, dim: int, depth: int,
                 n_classes: int) -> None:
        super().__init__()
        tokens = (size // patch) ** 2
        self.stem = nn.Conv2d(c_in, dim, patch, stride=patch)
        self.blocks = nn.Sequential(
            *[MixerBlock(tokens, dim, 2 * tokens, 4 * dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, n_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x).flatten(2).transpose(1, 2)    # (batch, tokens, dim)
        x = self.norm(self.blocks(x))
        return self.head(x.mean(dim=1))


def _data(seed: int, steps: int, batch: int, c_in: int, size: int, n_classes: int) -> list:
    """One smooth random template per class, scaled by a random amplitude, plus pixel noise."""
    g = torch.Generator().manual_seed(83_000 + seed)
    t = torch.randn(n_classes, c_in, size, size, generator=g)
    t = nn.functional.avg_pool2d(t, 3, stride=1, padding=1)
    t = t / t.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_classes, (batch,), generator=g)
        amp = 0.6 + 0.8 * torch.rand(batch, 1, 1, 1, generator=g)
        x = amp * t[y] + 1.0 * torch.randn(batch, c_in, size, size, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    c_in = rng.choice([1, 3])
    size, patch = 16, 4
    dim = rng.choice([32, 48, 64])
    depth = rng.choice([2, 3, 4])
    n_classes = rng.choice([6, 8, 10])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([150, 180, 200])
    variant = seed % 3
    if variant == 0:    # Adam, constant lr
        opt_name, sched = "adam", "constant"
        sane, bad = rng.choice([1e-3, 2e-3]), rng.choice([0.2, 0.3, 0.4])
    elif variant == 1:  # AdamW, OneCycle with an SGD-sized max_lr
        opt_name, sched = "adamw", "onecycle"
        sane, bad = rng.choice([2e-3, 3e-3]), rng.choice([0.3, 0.4, 0.6])
    else:               # Adam, short linear warmup to a constant, far too high lr
        opt_name, sched = "adam", "warmup"
        sane, bad = rng.choice([1e-3, 2e-3]), rng.choice([0.3, 0.4, 0.5])
    lr = sane if fixed else bad
    warmup = rng.choice([5, 8, 10])

    torch.manual_seed(seed)
    model = Mixer(c_in, size, patch, dim, depth, n_classes)
    if opt_name == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    # Schedulers step after each optimizer step, as in a usual training loop.
    if sched == "onecycle":
        s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.25)
        opt.register_step_post_hook(lambda *_: s.step())
    elif sched == "warmup":
        s = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
        opt.register_step_post_hook(lambda *_: s.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, c_in, size, n_classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
