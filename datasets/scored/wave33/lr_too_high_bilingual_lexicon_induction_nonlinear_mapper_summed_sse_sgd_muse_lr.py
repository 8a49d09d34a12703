"""Supervised bilingual lexicon induction for a low-resource language pair: a small
non-linear mapper (Linear -> ReLU -> Linear) is trained on a seed dictionary to map the
source language's fastText word vectors into the target (pivot) language's embedding space.
Squared error summed over the dimensions and the pairs of the batch (``MSELoss(reduction=
"sum")``, as in the Torch7-era mapping code it was ported from), plain SGD.

Mechanism: the learning rate 0.08-0.15 was copied from MUSE's ``map_optimizer sgd,lr=0.1``,
whose loss is a per-example average, while this loss is a sum over 32-128 pairs x 96-160
dimensions.  The curvature of the summed loss is ~batch x |x|^2 larger, so lr x lambda_max is
far above 2: every SGD step overshoots, the error is amplified instead of reduced, the loss
grows by ~50x per step and overflows to inf/NaN within ~6 steps (update/weight ratio ~1 and
growing from step 1).

ORIGIN: None -- an optimiser-level cause (one global learning rate for every parameter).

Fix (fixed=True): lr 2e-3, sized for the summed loss; same model, loss, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("MUSE (Conneau et al. 2018, facebookresearch/MUSE, map_optimizer 'sgd,lr=0.1') and "
          "non-linear BLI mappers (Mohiuddin et al. 2020); lr tuned for a mean loss reused with a "
          "summed loss, SGD divergence for lr > 2/L on a quadratic loss (PyTorch forum 'MSE loss explodes to inf/nan with SGD').")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [128, 96, 160][seed % 3]
    hidden = [256, 192, 128][seed % 3]
    lr = 2e-3 if fixed else [0.1, 0.15, 0.08][seed % 3]
    bs = [64, 32, 128][seed % 3]
    steps = 150

    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, d))

    # the target space is a rotation of the source space plus a mild non-isomorphism
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
    bend = torch.randn(d, d, generator=g) / d ** 0.5
    vocab = torch.randn(5000, d, generator=g) * 0.3          # fastText-like per-dim scale
    tgt = vocab @ q + 0.3 * torch.tanh(vocab @ bend)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, 5000, (bs,), generator=g)
        batches.append((vocab[idx], tgt[idx]))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(reduction="sum"),
                batches=batches, steps=steps)
