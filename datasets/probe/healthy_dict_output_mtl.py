"""healthy (hard negative): a multi-task model with a dict of heads, one task plateaus early.

Nothing is wrong. A shared ReLU trunk (2-3 layers, He init) on standardised tabular features
feeds two heads and the model returns them as a dict, ``{"cls": logits, "reg": prediction}``;
the loss is cross-entropy on the class plus MSE on the regression target, read from the dict.
The regression target is a linear function of the inputs plus heavy, irreducible noise (55-70%
of its variance): the reg head fits the linear part within 20-40 steps and its MSE then sits
flat at the noise floor for the rest of the run, with batch-to-batch jitter and no trend. The
classification target is a nonlinear function (the sign pattern of two projections, an XOR-like
boundary, with a few per cent of labels flipped) that the trunk learns more slowly: the
cross-entropy halves over the run, most of it after the MSE has gone flat. The summed loss
therefore drops fast, then keeps decreasing more slowly; one of its two parts, and the reg
head's gradients, go flat early. A detector that reads a flat component loss, or small
gradients into one head, as a plateau or dead units is wrong here: that task has simply reached
its noise floor. Seeds change depth, width, input size, batch, noise level, the number of
classes, lr and run length.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Multi-task learning with a shared trunk and per-task heads (Caruana 1997; Ruder 2017, "
    "'An Overview of Multi-Task Learning in Deep Neural Networks'): tasks converge at different "
    "rates and a noisy regression task reaches its irreducible error early; the dict-of-outputs "
    "model style of torchvision detection models and Hugging Face ModelOutput."
)


class MultiTaskNet(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int, classes: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        dims = [d_in] + [width] * depth
        for i in range(depth):
            lin = nn.Linear(dims[i], dims[i + 1])
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
            layers += [lin, nn.ReLU()]
        self.trunk = nn.Sequential(*layers)
        self.cls = nn.Linear(width, classes)
        self.reg = nn.Linear(width, 1)
        for head in (self.cls, self.reg):
            nn.init.normal_(head.weight, 0.0, 0.01)
            nn.init.zeros_(head.bias)

    def forward(self, x: torch.Tensor) -> dict:
        h = self.trunk(x)
        return {"cls": self.cls(h), "reg": self.reg(h).squeeze(-1)}


def _loss(out: dict, y: torch.Tensor) -> torch.Tensor:
    """y[:, 0] is the class index, y[:, 1] the regression target."""
    ce = nn.functional.cross_entropy(out["cls"], y[:, 0].long())
    return ce + nn.functional.mse_loss(out["reg"], y[:, 1])


def _data(
    seed: int, steps: int, batch: int, d_in: int, classes: int, noise: float, flip: float
) -> list:
    g = torch.Generator().manual_seed(350_000 + seed)
    w_reg = torch.randn(d_in, generator=g)
    w_reg = w_reg / w_reg.norm()
    proj = torch.randn(d_in, 2, generator=g) / d_in**0.5
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        reg = (1.0 - noise) ** 0.5 * (x @ w_reg) + noise**0.5 * torch.randn(batch, generator=g)
        p = x @ proj * d_in**0.5
        # XOR-like: quadrant of two projections, folded into the classes, plus a radial split.
        quad = (p[:, 0] > 0).long() * 2 + (p[:, 1] > 0).long()
        cls = (quad + (p.norm(dim=1) > 1.2).long() * (p[:, 0] * p[:, 1] > 0).long()) % classes
        flipped = torch.rand(batch, generator=g) < flip
        cls = torch.where(flipped, torch.randint(0, classes, (batch,), generator=g), cls)
        batches.append((x, torch.stack([cls.float(), reg], dim=1)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([2, 3])
    width = rng.choice([64, 96, 128])
    d_in = rng.choice([8, 12, 16])
    classes = rng.choice([3, 4])
    batch = rng.choice([64, 128, 256])
    steps = rng.choice([150, 180, 200])
    noise = rng.choice([0.55, 0.6, 0.7])
    flip = rng.choice([0.02, 0.05])
    lr = rng.choice([1e-3, 2e-3, 3e-3])

    torch.manual_seed(seed)
    model = MultiTaskNet(d_in, width, depth, classes)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": _loss,
        "batches": _data(seed, steps, batch, d_in, classes, noise, flip),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
