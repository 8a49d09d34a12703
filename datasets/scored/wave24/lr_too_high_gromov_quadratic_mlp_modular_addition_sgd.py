"""Gromov (2023) 'Grokking modular arithmetic' model: a 2-layer MLP with quadratic activation
phi(z) = z^2 on the concatenated one-hot codes of (a, b), trained with MSE on the one-hot code of
(a + b) mod p, on a random half of all pairs.

Mechanism: the SGD learning rate was scaled up "to grok faster" (lr 10-15 instead of ~2 for
this width). The network output is cubic in the weights, so the curvature grows with the
weights themselves: once a step overshoots, the weights grow, the next gradient (quintic in the
weights) is larger still, and the iteration runs away super-geometrically. Within a handful of
steps the outputs pass float32 range and the loss is inf/NaN.

ORIGIN = None: the lr is a global optimiser setting; every layer's update/weight ratio is too
large at once, no module starts it.

Fix: the lr appropriate for this width (2.0); same model, init, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Gromov 2023 'Grokking modular arithmetic' (arXiv:2301.02679), 2-layer MLP with quadratic "
          "activation and MSE; polynomial activations are notoriously lr-sensitive and diverge to inf "
          "when lr is raised to speed up grokking")


class Square(nn.Module):
    def forward(self, x):
        return x * x


class QuadMLP(nn.Module):
    def __init__(self, p, width):
        super().__init__()
        self.hidden = nn.Linear(2 * p, width, bias=False)
        self.act = Square()
        self.out = nn.Linear(width, p, bias=False)
        nn.init.normal_(self.hidden.weight, std=1.0 / (2 * p) ** 0.5)
        nn.init.normal_(self.out.weight, std=1.0 / width)

    def forward(self, x):
        return self.out(self.act(self.hidden(x)))


def sq_loss(out, y):
    # Gromov's loss: squared error summed over the p output classes, averaged over the batch
    return ((out - y) ** 2).sum(-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    p = [23, 29, 31][seed % 3]
    width = [128, 192, 256][seed % 3]
    bs = [128, 192, 160][seed % 3]
    lr_bad = [10.0, 15.0, 12.0][seed % 3]
    steps = 250
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    a, b = a.flatten(), b.flatten()
    perm = torch.randperm(p * p, generator=g)[: (p * p) // 2]
    eye = torch.eye(p)
    X = torch.cat([eye[a[perm]], eye[b[perm]]], 1)
    Y = eye[(a[perm] + b[perm]) % p]
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(perm), (bs,), generator=g)
        batches.append((X[idx], Y[idx]))
    torch.manual_seed(seed)
    model = QuadMLP(p, width)
    opt = torch.optim.SGD(model.parameters(), lr=2.0 if fixed else lr_bad)
    return dict(model=model, optimizer=opt, loss_fn=sq_loss, batches=batches, steps=steps)
