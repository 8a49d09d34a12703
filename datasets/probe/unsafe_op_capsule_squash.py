"""unsafe_op: a capsule network whose squash has no epsilon meets an all-zero (masked) capsule.

Mechanism: a small CapsNet (Sabour et al. 2017) for shape classification: a 3x3 conv + ReLU, a
stride-2 conv whose channels are grouped into primary capsules (n_types x grid x grid vectors of
dimension 4-8), the squash nonlinearity, per-pair transformation matrices that turn each primary
capsule into a vote for each class capsule, three iterations of routing-by-agreement, a second
squash, and the margin loss on the class capsules' lengths. The squash is written as in the paper,

    n = sqrt(sum_k s_k^2),   v = (n^2 / (1 + n^2)) * s / n,

with no epsilon anywhere. The images come in different sizes and are letterboxed onto a fixed
canvas; a validity mask marks the real pixels and, so that padding casts no votes, the model
multiplies the pre-squash primary capsules by the mask pooled to the capsule grid (squash(0)
"should" be 0). For most of the run every image fills the canvas, the mask is all ones and
training is calm: the margin loss falls steadily. From a seed-dependent step (40-110) the loader
reaches a shard of smaller images; the first batch holding one has grid cells that see only
padding, their capsule vectors are exactly zero, n = sqrt(0) = 0 and s / n = 0 / 0 = NaN in the
forward pass (and sqrt's backward at 0 would be inf anyway). The NaN capsules vote NaN into every
class capsule through routing and the loss is NaN at that step, on finite, ordinary inputs.

ORIGIN: ``primary_squash``, the squash module applied to the primary capsules, the first module
whose output is non-finite (the conv outputs and the masked capsules are finite; the routing
module and ``class_squash`` only receive the NaN).
Fixed: the same squash with the epsilon inside the root, n = sqrt(sum s^2 + 1e-7), as in most
CapsNet implementations; a zero capsule then squashes to exactly zero with finite gradients and
training goes on. Nothing else changes (the same model, mask, data and optimizer).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "primary_squash"
SOURCE = (
    "Sabour, Frosst & Hinton 2017 (CapsNet, squash, routing-by-agreement, margin loss); NaN "
    "reports in public CapsNet re-implementations whose squash divides by the norm without an "
    "epsilon (the fix, sqrt(squared_norm + eps), is in most later versions), triggered by "
    "zero capsule vectors from masked/padded positions."
)


class Squash(nn.Module):
    def __init__(self, eps: float) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        sq = (s * s).sum(dim=-1, keepdim=True)
        n = torch.sqrt(sq + self.eps) if self.eps > 0 else torch.sqrt(sq)
        return (sq / (1.0 + sq)) * s / n


class Routing(nn.Module):
    """Votes u_hat[j|i] = W_ij u_i and dynamic routing (3 iterations) to the class capsules."""

    def __init__(self, n_in: int, d_in: int, classes: int, d_out: int, squash: Squash) -> None:
        super().__init__()
        self.weight = nn.Parameter(0.05 * torch.randn(n_in, classes, d_out, d_in))
        self.squash = squash
        self.iterations = 3

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        u_hat = torch.einsum("ijod,bid->bijo", self.weight, u)  # (batch, n_in, classes, d_out)
        b = u_hat.new_zeros(u_hat.shape[:3])
        for it in range(self.iterations):
            c = torch.softmax(b, dim=2)
            v = self.squash((c.unsqueeze(-1) * u_hat).sum(dim=1))  # (batch, classes, d_out)
            if it < self.iterations - 1:
                b = b + (u_hat * v.unsqueeze(1)).sum(dim=-1)
        return v


class CapsNet(nn.Module):
    def __init__(
        self, size: int, channels: int, n_types: int, d_caps: int, classes: int, eps: float
    ) -> None:
        super().__init__()
        self.n_types, self.d_caps = n_types, d_caps
        self.conv1 = nn.Conv2d(1, channels, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.primary = nn.Conv2d(channels, n_types * d_caps, 3, stride=2, padding=1)
        self.mask_pool = nn.MaxPool2d(2)
        self.primary_squash = Squash(eps)
        grid = (size + 1) // 2
        self.class_squash = Squash(eps)
        self.routing = Routing(n_types * grid * grid, d_caps, classes, 8, self.class_squash)

    def forward(self, img: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        s = self.primary(self.relu1(self.conv1(img)))  # (batch, types*d, grid, grid)
        b, _, gh, gw = s.shape
        cell = self.mask_pool(valid)  # 1 where the cell sees a real pixel, 0 in padding
        s = s * cell  # padding casts no votes
        s = s.view(b, self.n_types, self.d_caps, gh, gw).permute(0, 1, 3, 4, 2)
        u = self.primary_squash(s.reshape(b, -1, self.d_caps))
        v = self.routing(u)
        return torch.linalg.vector_norm(v, dim=-1)  # class capsule lengths


def _margin_loss(lengths: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    t = nn.functional.one_hot(y, lengths.shape[1]).float()
    pos = t * torch.relu(0.9 - lengths) ** 2
    neg = 0.5 * (1.0 - t) * torch.relu(lengths - 0.1) ** 2
    return (pos + neg).sum(dim=1).mean()


def _shapes(g: torch.Generator, n: int, size: int) -> tuple:
    """Four classes: horizontal bar, vertical bar, diagonal, hollow square; random place/size."""
    img = torch.zeros(n, size, size)
    y = torch.randint(0, 4, (n,), generator=g)
    for i in range(n):
        length = int(torch.randint(3, 6, (1,), generator=g))
        r0 = int(torch.randint(0, size - length, (1,), generator=g))
        c0 = int(torch.randint(0, size - length, (1,), generator=g))
        k = int(y[i])
        if k == 0:
            img[i, r0 + length // 2, c0 : c0 + length] = 1.0
        elif k == 1:
            img[i, r0 : r0 + length, c0 + length // 2] = 1.0
        elif k == 2:
            idx = torch.arange(length)
            img[i, r0 + idx, c0 + idx] = 1.0
        else:
            img[i, r0 : r0 + length, c0] = 1.0
            img[i, r0 : r0 + length, c0 + length - 1] = 1.0
            img[i, r0, c0 : c0 + length] = 1.0
            img[i, r0 + length - 1, c0 : c0 + length] = 1.0
    img = img * (0.6 + 0.4 * torch.rand(n, 1, 1, generator=g))
    img = img + 0.1 * torch.rand(n, size, size, generator=g)
    return img.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    size = rng.choice([10, 12, 14])
    channels = rng.choice([8, 12, 16])
    n_types = rng.choice([2, 4])
    d_caps = rng.choice([4, 6, 8])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([5e-3, 1e-2])
    fail_step = rng.randint(40, 110)  # where the shard of smaller images starts

    g = torch.Generator().manual_seed(340_000 + seed)
    batches = []
    for i in range(steps):
        img, y = _shapes(g, batch, size)
        valid = torch.ones(batch, 1, size, size)
        if i >= fail_step:
            small = torch.rand(batch, generator=g) < 0.15
            if i == fail_step:
                small[0] = True
            for j in torch.nonzero(small).flatten().tolist():
                h = int(torch.randint(size // 2, size - 2, (1,), generator=g))
                w = int(torch.randint(size // 2, size - 2, (1,), generator=g))
                valid[j, :, h:, :] = 0.0  # letterboxed: real pixels in the top-left h x w
                valid[j, :, :, w:] = 0.0
            img = img * valid
        batches.append(((img, valid), y))

    torch.manual_seed(seed)
    model = CapsNet(size, channels, n_types, d_caps, 4, eps=1e-7 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": _margin_loss,
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
