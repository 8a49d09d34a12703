"""dead_relu: a multi-label MLP tagger whose "prior probability" bias init hits its hidden layers.

Mechanism: an MLP (2-4 hidden Linear layers, activations applied in ``forward`` as ``F.relu``,
no ``nn.ReLU`` modules) tags standardised feature vectors with K rare labels (each positive for
2-5% of the records), trained with BCE-with-logits. Following the focal-loss / RetinaNet recipe,
the author initialises biases to the prior ``-log((1 - pi) / pi)`` (-2.9 to -3.9 here) so that the
first predictions match the label frequency, but writes it as a loop over every ``nn.Linear`` of
the model instead of the output layer only. The default Linear weights give the first layer
pre-activations with a spread of about 0.6 on standardised inputs, so a bias of -2.9 or lower puts
the pre-activations of every unit below zero for (all but about one in a million) records:
``F.relu`` outputs exactly 0 and its gradient is 0, so no gradient reaches a hidden weight or
bias; the next layers only see their own negative biases and are dead too, and the output layer's
input is zero. Only the output bias can learn, and it already sits at the label prior: the loss
stays at the prior's entropy for the whole run (a plateau from step 0, not a divergence).
Seeds change the depth, the width, the number of labels, the prior, the batch size, the optimizer
(Adam or SGD with momentum) and its lr.

ORIGIN: ``layers.0``, the first hidden Linear, whose rectified outputs are all dead (its weights
are fine, its bias pushes every pre-activation below zero; the ReLU is functional, so this Linear
is the module whose units die, and every later layer is dead only because its input is zero).
Fixed: the same model, data and optimizer with the prior bias set on the output layer only and
the hidden biases zero, the usual ReLU bias init (a LeakyReLU would also keep a gradient flowing,
but the bias is the root cause).
"""

from __future__ import annotations

import itertools
import math
import random

import torch
from torch import nn
from torch.nn import functional as F

CAUSE = "dead_relu"
ORIGIN = "layers.0"
SOURCE = (
    "Lin et al. 2017 (Focal Loss / RetinaNet, sec. 4.1: only the final classification layer's "
    "bias is set to -log((1 - pi) / pi), all other biases 0), and forum reports of 'all ReLU "
    "outputs are zero / loss stuck from the first iteration' after a bias-init loop applied a "
    "negative constant to every layer (CS231n: a bad bias can make a ReLU never activate)."
)


class Tagger(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int, n_labels: int) -> None:
        super().__init__()
        dims = [d_in] + [width] * depth
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(dims))
        self.out = nn.Linear(width, n_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.out(x)


def _data(seed: int, steps: int, batch: int, d_in: int, n_labels: int, prior: float) -> list:
    """Labels from a fixed two-layer teacher, thresholded so each is positive for `prior`."""
    g = torch.Generator().manual_seed(330_000 + seed)
    w1 = torch.randn(d_in, 2 * n_labels, generator=g) / d_in**0.5
    w2 = torch.randn(2 * n_labels, n_labels, generator=g)
    xs = torch.randn(steps * batch, d_in, generator=g)
    score = torch.tanh(xs @ w1) @ w2 + 0.1 * torch.randn(steps * batch, n_labels, generator=g)
    thresh = score.quantile(1.0 - prior, dim=0)
    ys = (score > thresh).float()
    return [(xs[i * batch:(i + 1) * batch], ys[i * batch:(i + 1) * batch]) for i in range(steps)]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([16, 24, 32])
    width = rng.choice([64, 96, 128])
    depth = rng.choice([2, 3, 4])
    n_labels = rng.choice([4, 6, 8])
    prior = rng.choice([0.02, 0.03, 0.05])
    batch = rng.choice([256, 512])
    steps = rng.choice([100, 120, 150])
    opt_kind = rng.choice(["adam", "sgd"])
    lr = rng.choice([2e-3, 3e-3]) if opt_kind == "adam" else rng.choice([0.5, 1.0])

    batches = _data(seed, steps, batch, d_in, n_labels, prior)
    torch.manual_seed(seed)
    model = Tagger(d_in, width, depth, n_labels)
    prior_bias = -math.log((1.0 - prior) / prior)
    with torch.no_grad():
        if fixed:
            for layer in model.layers:
                layer.bias.zero_()
            model.out.bias.fill_(prior_bias)
        else:
            for m in model.modules():
                if isinstance(m, nn.Linear):
                    m.bias.fill_(prior_bias)
    if opt_kind == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.BCEWithLogitsLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
