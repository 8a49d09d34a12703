"""Class-incremental continual learning on a stream of pen-gesture trajectories: the stream
introduces two new gesture classes every few dozen steps (four tasks, eight classes), a GRU
encoder reads each (x, y, pressure) trajectory, and the linear head has one output per class.
As is usual in class-incremental code, the logits of classes that have not appeared yet are set
to -inf before the softmax (``masked_fill(~seen, -inf)``), so the model is never trained to push
down classes it has never seen; the loss is NLL on log_softmax, optimised with RMSprop.

Healthy, but easy to misread: the model's output tensor contains -inf in every step before the
last task (the masked future classes), yet the loss is always finite because no target is ever
a masked class and log_softmax/NLL only read the target's finite log-probability (and the
gradients of the masked entries are exactly zero).  At every task switch the loss jumps (two new
classes whose logits start low, and more active classes in the softmax) and then falls again.

ORIGIN = None: nothing fails.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Class-incremental learning with masking of unseen-class logits (e.g. 'labels trick' / "
          "masked softmax in Avalanche and iCaRL-style code); van de Ven et al. 2022 'Three types "
          "of incremental learning'; pen-gesture trajectories as in $1-recognizer style datasets.")


class GestureGRU(nn.Module):
    def __init__(self, hidden, n_classes):
        super().__init__()
        self.gru = nn.GRU(3, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x, seen):
        h, _ = self.gru(x)
        logits = self.head(h[:, -1])
        return logits.masked_fill(~seen, float("-inf"))


def _gestures(g, n, classes, length):
    c = classes[torch.randint(0, len(classes), (n,), generator=g)]
    t = torch.linspace(0, 1, length)[None].expand(n, length)
    phase = 0.6 * torch.rand(n, 1, generator=g)
    kind = c % 4
    direction = torch.where((c < 4)[:, None], torch.ones(n, 1), -torch.ones(n, 1))
    ang = direction * 2 * math.pi * t + phase
    circle = torch.stack([torch.cos(ang), torch.sin(ang)], -1)
    line = torch.stack([direction * (2 * t - 1), 0.3 * torch.sin(3 * math.pi * t) * direction], -1)
    zig = torch.stack([2 * t - 1, direction * torch.sign(torch.sin(6 * math.pi * t))], -1)
    loop = torch.stack([torch.sin(2 * ang), direction * torch.sin(ang)], -1)
    shapes = torch.stack([circle, line, zig, loop], 1)  # (n, 4, L, 2)
    xy = shapes[torch.arange(n), kind]
    xy = xy * (0.7 + 0.6 * torch.rand(n, 1, 1, generator=g)) + 0.08 * torch.randn(n, length, 2, generator=g)
    pressure = (0.5 + 0.3 * torch.sin(math.pi * t))[..., None]
    return torch.cat([xy, pressure], -1), c


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8080 + seed)
    hidden = pick(1, [32, 48, 64])
    lr = pick(2, [2e-3, 3e-3, 1.5e-3])
    batch = pick(3, [32, 48, 24])
    task_len = pick(4, [40, 45, 50])
    length = 24
    n_classes = 8
    order = torch.randperm(n_classes, generator=g)
    steps = 4 * task_len

    model = GestureGRU(hidden, n_classes)

    batches = []
    for s in range(steps):
        task = s // task_len
        current = order[2 * task: 2 * task + 2]
        seen = torch.zeros(n_classes, dtype=torch.bool)
        seen[order[: 2 * task + 2]] = True
        x, y = _gestures(g, batch, current, length)
        batches.append(((x, seen.expand(batch, n_classes)), y))

    optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.nll_loss(F.log_softmax(out, -1), y),
            "batches": batches, "steps": steps}
