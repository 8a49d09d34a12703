"""Wide two-layer student (width 128-256, ReLU) learning a random two-layer tanh teacher on
Gaussian inputs, the standard science-of-deep-learning teacher-student setup, trained in mixed
precision: forward and loss under float16 autocast, with a working torch.amp.GradScaler.

Why it is healthy although a naive monitor would flag it: the scaler starts at its default
scale 2**16; the scaled loss backward overflows float16 in the first steps, the scaler finds
inf gradients, skips those optimizer steps (the parameters do not move at all: exactly-zero
updates, repeated identical losses on the same-statistics data) and halves its scale until the
gradients are finite. The summed-over-outputs squared loss is large at the start. From then on
training proceeds normally and the student fits the teacher; the forward activations stay far
below 65504, so nothing overflows in the forward pass and the loss is finite throughout.

ORIGIN = None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Teacher-student two-layer networks (Goldt et al. 2019; Saad & Solla 1995) trained with "
          "PyTorch AMP: GradScaler's documented skip-and-backoff of steps with inf/NaN gradients "
          "during the first iterations")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(21000 + seed)
    d = [100, 150, 200][seed % 3]
    width = [128, 256, 192][seed % 3]
    m_teacher, d_out = 8, 10
    bs = [64, 96, 128][seed % 3]
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    steps = 200
    W1 = torch.randn(m_teacher, d, generator=g) / math.sqrt(d)
    W2 = torch.randn(d_out, m_teacher, generator=g) * 3.0
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g)
        y = torch.tanh(x @ W1.T * 2.0) @ W2.T
        batches.append((x, y))
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(d, width), nn.ReLU(), nn.Linear(width, d_out))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

    def loss_fn(out, y):
        return ((out.float() - y) ** 2).sum(-1).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
