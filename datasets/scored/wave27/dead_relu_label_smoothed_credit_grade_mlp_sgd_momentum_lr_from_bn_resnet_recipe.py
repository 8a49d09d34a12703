"""Tabular credit-grade classifier (plain ReLU MLP, no normalisation) trained with
label-smoothed cross-entropy, using the SGD recipe of a BatchNorm ResNet (momentum 0.9,
lr scaled by the linear-scaling rule to ~1) that the team reuses for every classifier.

Mechanism: without BatchNorm nothing rescales the pre-activations, and the first momentum
steps at lr ~1 move the hidden biases and weights by far more than their initial scale. The
early gradients push most hidden pre-activations strongly negative for the whole input
distribution; those ReLUs output exactly zero on every sample, so their incoming weights get
zero gradient from then on. After a handful of steps (almost) all hidden units are dead, the
logits become input-independent and the label-smoothed loss plateaus near the entropy of the
grade prior, while the same network at a sane lr learns. Losses stay finite.

ORIGIN: ``head.1``, the ReLU of the classification head: it sits directly under the output
layer, receives the largest early updates (its gradient is the output error times the output
weights) and is the layer whose units die first and most completely; once it is dead no
gradient reaches the trunk, whatever state the trunk's units are in.

Fix: lower the learning rate to a value suited to an un-normalised MLP (lr / 20); everything
else (label smoothing, momentum, data, steps) unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("Goyal et al. 2017 linear-scaling rule applied to a model without BatchNorm; Szegedy et al. 2016 label "
          "smoothing; 'all ReLU outputs become zero after a few iterations with a high learning rate' (CS231n notes, "
          "PyTorch forums)")

N_CLASSES = 6


class GradeMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(width, 64), nn.ReLU(), nn.Linear(64, N_CLASSES))

    def forward(self, x):
        return self.head(self.trunk(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 1 + seed % 3
    width = [128, 96, 160][seed % 3]
    batch = [64, 128, 96][seed % 3]
    lr = [1.5, 1.2, 1.8][seed % 3]
    if fixed:
        lr = lr / 20
    d_in, steps = 20, 200

    torch.manual_seed(seed)
    model = GradeMLP(d_in, width, depth)

    # synthetic standardised applicant features; grade from a nonlinear score
    w1 = torch.randn(d_in, 8, generator=g)
    w2 = torch.randn(8, generator=g)
    cuts = torch.tensor([-1.5, -0.6, 0.0, 0.6, 1.5])
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        score = torch.tanh(x @ w1 / 4.0) @ w2 / 2.0 + 0.05 * torch.randn(batch, generator=g)
        y = torch.bucketize(score, cuts)
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
