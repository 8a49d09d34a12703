"""unsafe_op: a ``torch.where``-guarded sqrt in a Siamese distance head; NaN gradient at d = 0.

Mechanism: a Siamese MLP embeds the two items of each pair, and a ``PairDistance`` module turns
the squared Euclidean distance ``d2`` into a distance for a contrastive (Hadsell-Chopra-LeCun)
loss. Its author "guarded" the square root the way many do: ``torch.where(d2 > 0,
torch.sqrt(d2), torch.zeros_like(d2))``. The forward pass is always finite, and on ordinary
pairs (two noisy views of one sample, or two different samples) ``d2`` is never exactly zero,
so training is calm. But ``torch.where`` does not stop autograd from differentiating the branch
it did not select: at an element with ``d2 == 0`` the backward of ``sqrt`` is
``grad / (2 * sqrt(0)) = 0 / 0 = NaN`` (the ``0 * inf`` of the masked branch), and ``where``
passes it on. That happens the first time a batch holds an exact duplicate pair (the
augmentation pipeline sometimes returns the untouched sample for both views, and both rows then
embed to bit-identical vectors): the loss of that step is finite, but every gradient is NaN
and Adam writes NaN into every weight. From the next step on every embedding is NaN, yet the
loss stays finite: the NaN ``d2`` fails the ``d2 > 0`` test, so the same guard outputs a
distance of 0 for every pair and the loss sits at the margin penalty of the negative pairs, far
above where it was (a stall with finite loss and NaN weights). The step of the first duplicate
pair, the sizes, the margin, the batch and the lr depend on the seed.

ORIGIN: ``distance``, the module that contains the where/sqrt: its forward output is finite,
and the first non-finite value of the run is born in its backward (the gradient it sends to the
encoder's last Linear, ``encoder.<last>``, is already NaN).
Fixed: the same module with ``torch.sqrt(d2.clamp_min(1e-12))`` in the selected branch (the
"double where" / clamp-inside-the-sqrt pattern), so the unselected branch's derivative is finite
and ``where`` multiplies it by an honest zero; nothing else changes.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "distance"
SOURCE = (
    "The 'torch.where does not block NaN gradients' pattern: pytorch/pytorch issues on NaN "
    "gradients through torch.where with sqrt/log in the unselected branch and on the NaN "
    "gradient of torch.norm / pairwise distance at exactly zero; JAX FAQ 'gradients contain "
    "NaN where using where' (the double-where trick); contrastive loss of Hadsell et al. 2006."
)


class PairDistance(nn.Module):
    """Euclidean distance of paired embeddings with a zero 'guard'."""

    def __init__(self, safe: bool) -> None:
        super().__init__()
        self.safe = safe

    def forward(self, ea: torch.Tensor, eb: torch.Tensor) -> torch.Tensor:
        d2 = ((ea - eb) ** 2).sum(dim=-1)
        inner = d2.clamp_min(1e-12) if self.safe else d2
        return torch.where(d2 > 0, torch.sqrt(inner), torch.zeros_like(d2))


class Siamese(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int, emb: int, safe: bool) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        dims = [d_in] + [width] * depth
        for i in range(depth):
            layers += [nn.Linear(dims[i], dims[i + 1]), nn.ReLU()]
        layers.append(nn.Linear(width, emb))
        self.encoder = nn.Sequential(*layers)
        self.distance = PairDistance(safe)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        e = self.encoder(torch.cat([a, b], dim=0))  # one pass, so equal rows embed identically
        ea, eb = e[: a.shape[0]], e[a.shape[0] :]
        return self.distance(ea, eb)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin: float) -> None:
        super().__init__()
        self.margin = margin

    def forward(self, d: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
        pos = same * d**2
        neg = (1.0 - same) * torch.relu(self.margin - d) ** 2
        return 0.5 * (pos + neg).mean()


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([12, 16, 24])
    width = rng.choice([32, 64, 96])
    depth = rng.choice([1, 2])
    emb = rng.choice([8, 16])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([110, 130, 150])
    lr = rng.choice([1e-3, 2e-3])
    margin = rng.choice([1.5, 2.0, 2.5])
    noise = rng.choice([0.2, 0.3])
    dup_step = rng.randrange(int(0.3 * steps), int(0.6 * steps))  # first identity-augmented pair

    g = torch.Generator().manual_seed(410_000 + seed)
    n_classes = 10
    protos = 1.5 * torch.randn(n_classes, d_in, generator=g)
    batches = []
    for step in range(steps):
        ca = torch.randint(0, n_classes, (batch,), generator=g)
        same = (torch.rand(batch, generator=g) < 0.5).float()
        other = torch.randint(0, n_classes, (batch,), generator=g)
        cb = torch.where(same.bool(), ca, other)
        same = (ca == cb).float()
        a = protos[ca] + torch.randn(batch, d_in, generator=g)
        b = protos[cb] + torch.randn(batch, d_in, generator=g)
        a = a + noise * torch.randn(batch, d_in, generator=g)  # the augmentation
        b = b + noise * torch.randn(batch, d_in, generator=g)
        if step >= dup_step and (step == dup_step or rng.random() < 0.1):
            i = rng.randrange(batch)  # identity augmentation of one sample for both views
            b[i] = a[i]
            same[i] = 1.0
        batches.append(((a, b), same))

    torch.manual_seed(seed)
    model = Siamese(d_in, width, depth, emb, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": ContrastiveLoss(margin),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
