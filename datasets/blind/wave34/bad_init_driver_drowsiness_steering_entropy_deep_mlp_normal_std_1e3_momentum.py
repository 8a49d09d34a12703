"""Driver-drowsiness detector from steering-behaviour features (steering-entropy, reversal rate,
lane-position SD, PERCLOS from the cabin camera, blink duration, yaw-rate jerk), a deep MLP with
a BCE-with-logits head (drowsy / alert).

Mechanism: the hidden Linear layers are initialised with ``normal_(std=1e-3)`` (a value copied
from a logistic-regression baseline where a tiny init is harmless).  Through 5-8 ReLU layers of
width W the activation scale shrinks by ~1e-3*sqrt(W/2) per layer, so from step 0 the logits are
~0 and every gradient except the last bias is vanishing (the backward signal shrinks by the same
factor per layer).  SGD with momentum only moves the output bias: the loss sits at the entropy
of the class prior and never improves.

ORIGIN: ``mlp.0`` - the first hidden Linear, where the geometric shrinkage starts.

Fix: Kaiming-normal init (fan_in, relu) for the hidden layers; everything else unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "mlp.0"
SOURCE = ("Known pattern: tiny N(0, 1e-3) init carried over from a linear baseline into a deep "
          "ReLU MLP -> vanishing activations/gradients from step 0 (Glorot & Bengio 2010; He et al. "
          "2015); drowsiness detection from steering entropy + PERCLOS features")


class DrowsinessMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.mlp = nn.Sequential(*layers)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.mlp(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [5, 7, 6][seed % 3]
    width = [64, 96, 80][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 200
    n_in = 10

    model = DrowsinessMLP(n_in, width, depth)
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear) and name.startswith("mlp"):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1e-3)
            nn.init.zeros_(m.bias)

    w_true = torch.randn(n_in, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        # drowsiness: nonlinear in PERCLOS x steering entropy interaction plus linear part
        z = x @ w_true * 0.8 + 1.5 * x[:, 0] * x[:, 1] - 0.8 * x[:, 2].abs()
        y = (z + 0.3 * torch.randn(bs, generator=g) > 0).float()
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
