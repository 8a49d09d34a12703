"""saturation of the sigmoid transform gates of a highway MLP (classification, plain, momentum or
Nesterov SGD).

Mechanism: a highway network (Srivastava et al. 2015): after an input projection, every block
computes y = T(x) * H(x) + (1 - T(x)) * x with a ReLU transform H and a sigmoid transform gate T =
sigmoid(W_T x + b_T). The paper initialises b_T negative (-1 to -3) so that blocks start close to
the identity; here b_T is -8 to -12 (a config that meant -1, or a value copied from a much deeper
model). Every gate pre-activation then sits near -8 to -12 whatever the input (the weights add
about +-1), the sigmoid is in its flat lower tail (T ~ 3e-4 to 6e-6, sigmoid' ~ T), every block
passes its input through unchanged, and both the gradient to H (scaled by T) and to the gate's own
weights and bias (scaled by sigmoid') are ~0. The network is a linear map of its input, and the
task (which of three concentric rings a sample lies in, in a 2-D subspace of the features) has no
linear part: the cross-entropy stays at about log(3). A plateau, not a divergence. (Adam was tried
too and does not make a label: its per-parameter normalisation magnifies the tiny gate gradients,
and the gate weights, moving by lr per step, open some gates within the run.)

ORIGIN: ``blocks.0.gate_act``, the first block's gate Sigmoid, the first saturating module called
in the forward pass and the one whose saturation blocks the gradient (the ReLUs of H are in their
normal range).
Fixed: the same weights, data and optimizer with the gate biases at -1, the paper's range: the
gates are in their responsive range, the blocks contribute, and the loss falls.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "blocks.0.gate_act"
SOURCE = (
    "Srivastava, Greff & Schmidhuber 2015, 'Training Very Deep Networks' (highway networks: "
    "transform-gate bias initialised to -1 to -3; a too negative bias closes the gates) and the "
    "general sigmoid-saturation warning of LeCun et al. 1998, Efficient BackProp: a saturated "
    "sigmoid passes almost no gradient."
)


class HighwayBlock(nn.Module):
    def __init__(self, d: int, gate_bias: float) -> None:
        super().__init__()
        self.gate = nn.Linear(d, d)
        self.gate_act = nn.Sigmoid()
        self.transform = nn.Linear(d, d)
        self.act = nn.ReLU()
        nn.init.constant_(self.gate.bias, gate_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.gate_act(self.gate(x))
        h = self.act(self.transform(x))
        return t * h + (1.0 - t) * x


class HighwayNet(nn.Module):
    def __init__(self, d_in: int, d: int, blocks: int, classes: int, gate_bias: float) -> None:
        super().__init__()
        self.proj = nn.Linear(d_in, d)
        self.blocks = nn.Sequential(*[HighwayBlock(d, gate_bias) for _ in range(blocks)])
        self.head = nn.Linear(d, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.proj(x)))


def _data(seed: int, steps: int, batch: int, d_in: int) -> list:
    """Standardised features; the class is the ring (radius tercile) of the sample's projection
    onto a random 2-D subspace, so the classes are concentric and have no linear boundary."""
    g = torch.Generator().manual_seed(220_000 + seed)
    basis, _ = torch.linalg.qr(torch.randn(d_in, 2, generator=g))
    # Radius terciles of a standard 2-D Gaussian: r^2 ~ chi2(2), P(r < q) = 1 - exp(-q^2 / 2).
    edges = (math.sqrt(2.0 * math.log(1.5)), math.sqrt(2.0 * math.log(3.0)))
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        r = (x @ basis).norm(dim=1)
        y = (r > edges[0]).long() + (r > edges[1]).long()
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([4, 6, 8])
    d = rng.choice([32, 48, 64])
    blocks = rng.choice([2, 3, 4, 5])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    bad_bias = rng.choice([-8.0, -10.0, -12.0])
    optim = rng.choice(["momentum", "nesterov", "plain"])
    lr = rng.choice([0.05, 0.1]) if optim != "plain" else rng.choice([0.3, 0.5])

    torch.manual_seed(seed)
    model = HighwayNet(d_in, d, blocks, 3, gate_bias=-1.0 if fixed else bad_bias)
    opt = torch.optim.SGD(
        model.parameters(),
        lr=lr,
        momentum=0.0 if optim == "plain" else 0.9,
        nesterov=optim == "nesterov",
    )
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, d_in),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
