"""EV remaining-range estimator: an MLP on standardised trip/vehicle features (pack SOC, SOH,
ambient temperature, HVAC power, mean speed, speed variance, elevation gain of the planned route,
payload, tyre pressure deviation, regen share) that regresses the remaining range (standardised
km), Huber loss, RMSprop.

Mechanism: the hidden Linear biases are initialised with a constant -3 ("negative bias so the
ReLU code is sparse", a trick copied from a sparse-autoencoder codebase).  With the default
(kaiming-uniform) weights and standardised inputs the pre-activations have std ~0.6, so
practically every ReLU of the first layer is off for every input from step 0 and the deeper
layers only see their (negative) bias.  Dead units get exactly zero gradient; only the output
bias moves, so the loss sits at the Huber loss of predicting the mean for the whole run
(no inf/NaN - a stall).

ORIGIN: ``hidden.1`` - the first ReLU, the first layer whose units are dead; the rest of the
stack is dead because it only receives its zeros.

Fix: zero bias init (the PyTorch/He default for ReLU MLPs); same weights init, data, lr, steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "hidden.1"
SOURCE = ("Known pattern: negative constant bias init for 'sparse' ReLU codes leaves units dead "
          "from the start (dying-ReLU discussions, e.g. Lu et al. 2019 'Dying ReLU and "
          "initialization'); EV range estimation from trip and vehicle features")


class RangeMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.hidden = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.hidden(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [3, 4, 2][seed % 3]
    width = [128, 64, 96][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150
    n_in = 10

    model = RangeMLP(n_in, width, depth)
    for m in model.hidden:
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.bias, 0.0 if fixed else -3.0)

    w = torch.randn(n_in, generator=g) * 0.5
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        # range ~ SOC*SOH, lowered by cold (HVAC) and speed^2, nonlinear
        y = (x[:, 0] + 0.5 * x[:, 0] * x[:, 1] - 0.6 * torch.relu(-x[:, 2]) * x[:, 3]
             - 0.4 * x[:, 4] ** 2 + 0.4 + x @ w * 0.3)
        y = y / 1.3 + 0.1 * torch.randn(bs, generator=g)
        batches.append((x, y))

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=1.0), batches=batches,
                steps=steps)
