"""Card-transaction fraud classifier: an MLP over standardised transaction features (PCA-style
V1..Vk components, log-amount, time-of-day, merchant-risk scores) trained with BCE; frauds are
only a few percent of the rows.

Mechanism: the "initialise the output bias to the log-odds of the base rate" trick (b = -log((1
- pi) / pi) ~ -2.7 .. -3.2; Karpathy's "init well" recipe step, the focal-loss "prior
probability" init), meant only for the final logit so the model starts predicting the fraud
rate, was applied in a loop over *every* nn.Linear. Every hidden ReLU then starts with pre-
activation ~ N(-3, 0.6): all hidden units are dead for all transactions from step 0, the
downstream layers receive exact zeros, and no gradient reaches any hidden weight. Only the
output bias can move; the model predicts the base rate for every transaction and the loss sits
on that plateau.

ORIGIN: "mlp.1" -- the first hidden ReLU, dead for every input (the later ones are too).

Fix (fixed=True): the prior bias is applied to the output layer only; hidden biases keep the
default initialisation. Same model, loss, optimiser, lr and data.
"""
import math
import numpy as np
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("log-odds / prior-probability bias init (Karpathy recipe, RetinaNet) applied to all "
          "Linear layers in fraud-detection MLPs; dead hidden layers, model outputs the base rate")


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_feat = [24, 30, 20][seed % 3]
    width = [64, 48, 96][seed % 3]
    depth = [3, 2, 3][seed % 3]
    batch = [256, 384, 256][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    prior = [0.05, 0.04, 0.06][seed % 3]
    steps = 200
    w1 = rng.normal(size=n_feat) / math.sqrt(n_feat)
    w2 = rng.normal(size=n_feat) / math.sqrt(n_feat)

    def sample(b):
        x = rng.normal(size=(b, n_feat))
        score = 2.2 * (x @ w1) + 1.5 * np.abs(x @ w2) + 0.8 * x[:, 0] * x[:, 1]
        thr = np.quantile(score, 1 - prior)
        y = (score + 0.3 * rng.normal(size=b) > thr).astype(np.float32)
        return torch.tensor(x, dtype=torch.float32), torch.tensor(y)

    batches = [sample(batch) for _ in range(steps)]
    layers, d = [], n_feat
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers += [nn.Linear(d, 1)]
    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(*layers))
    prior_bias = -math.log((1 - prior) / prior)
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    for m in (linears[-1:] if fixed else linears):
        nn.init.constant_(m.bias, prior_bias)

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    bce = nn.BCEWithLogitsLoss()

    def loss_fn(logits, y):
        return bce(logits.squeeze(-1), y)

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
