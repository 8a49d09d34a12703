"""Corporate bankruptcy / default predictor in the style of the 1990s neural credit-risk literature
(Odom & Sharda 1990, Tam & Kiang 1992 used logistic hidden units on Altman ratios), made "deep"
by stacking logistic (sigmoid) hidden layers and trained with plain SGD + momentum and BCE on a
sigmoid output.

Mechanism: every hidden unit is a logistic sigmoid. Its outputs are all positive (~0.5) and its
derivative is at most 0.25, so each layer multiplies the backpropagated signal by <= 1/4 times a
~unit weight gain; through 7-9 stacked sigmoid layers the gradient reaching the lower layers is
1e-4 .. 1e-5 of the head's, and the positive, non-centred sigmoid outputs make the upper layers
collapse to a constant. The network outputs the base default rate for every firm and the loss
plateaus at the label entropy.

ORIGIN: "net.1" -- the first sigmoid hidden unit layer; the saturating/vanishing chain starts
there and repeats in every later nn.Sigmoid.

Fix (fixed=True): non-saturating hidden activations (nn.ReLU instead of nn.Sigmoid in the hidden
layers; the output sigmoid for the default probability is unchanged). Same depth, width, init,
optimiser and learning rate.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("deep logistic-activation MLPs for bankruptcy prediction (Odom & Sharda 1990 style) "
          "trained with SGD: vanishing gradients through stacked sigmoids, constant prediction")


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    depth = [8, 7, 9][seed % 3]
    width = [64, 48, 80][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    steps = 200
    n_feat = 12

    # standardised financial ratios (working capital/TA, retained earnings/TA, EBIT/TA, ...)
    w = rng.normal(size=n_feat)
    w2 = rng.normal(size=n_feat) * 0.5

    def sample(b):
        x = rng.normal(size=(b, n_feat))
        logit = 1.2 * (x @ w) / np.sqrt(n_feat) + 0.8 * np.tanh(x @ w2) - 1.0
        y = (logit + 0.25 * rng.normal(size=b) > 0).astype(np.float32)
        return torch.tensor(x, dtype=torch.float32), torch.tensor(y)

    batches = [sample(batch) for _ in range(steps)]
    act = nn.ReLU if fixed else nn.Sigmoid
    layers = [nn.Linear(n_feat, width), act()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), act()]
    layers += [nn.Linear(width, 1), nn.Sigmoid()]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    for m in model.modules():                 # Glorot init, as recommended for logistic units
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    bce = nn.BCELoss()

    def loss_fn(p, y):
        return bce(p.squeeze(-1), y)

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
