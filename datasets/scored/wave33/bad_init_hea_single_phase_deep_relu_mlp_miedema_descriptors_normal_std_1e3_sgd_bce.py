"""High-entropy-alloy phase-formation classifier: a deep ReLU MLP maps Miedema / Hume-Rothery
style descriptors of a composition (mixing enthalpy, mixing entropy, atomic-size mismatch delta,
valence electron concentration, electronegativity difference, omega parameter, ...) to the
probability that the alloy forms a single solid-solution phase (BCC/FCC) versus
intermetallic / multi-phase.

Mechanism: every Linear layer is initialised with `normal_(std=1e-3)` and zero bias (a
"small random weights keep the net near linear" recipe copied from an old MATLAB nnet script).
With fan_in 32-96, each layer multiplies the activation scale by ~1e-3*sqrt(fan_in/2) ~ 5e-3,
so after 6-8 layers the logit is ~1e-15 of the input and the backward signal to every layer
is equally tiny. Plain SGD cannot move the weights: the loss sits at ln 2 (the class prior)
for the whole run.

ORIGIN: `mlp.0`, the first Linear. The geometric shrinkage starts at the first layer and
every subsequent layer compounds it; no single later layer is special.

Fix: Kaiming-uniform/normal init (fan_in, relu gain) for all hidden Linear layers.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "mlp.0"
SOURCE = ("Known pattern: tiny Gaussian init (std 1e-3 / 0.001) in deep ReLU MLPs causes "
          "vanishing activations and gradients (Glorot & Bengio 2010; He et al. 2015); HEA "
          "phase-classification ANN papers (e.g. Islam et al. 2018, Huang et al. 2019) use "
          "such descriptor MLPs.")


class HEAPhaseMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers = []
        c = n_in
        for _ in range(depth):
            layers += [nn.Linear(c, width), nn.ReLU()]
            c = width
        layers.append(nn.Linear(c, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x).squeeze(-1)


def _descriptors(g, n):
    # standardised descriptors: dHmix, dSmix, delta, VEC, dChi, omega, Tm, ... (12 features)
    x = torch.randn(n, 12, generator=g)
    # single-phase when |dHmix| small, delta small, omega large (Yang & Zhang criteria)
    score = -1.2 * x[:, 0].abs() - 1.5 * x[:, 2] + 1.0 * x[:, 5] + 0.5 * x[:, 3] * x[:, 4]
    y = (score + 0.3 * torch.randn(n, generator=g) > -0.6).float()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [32, 64, 96][seed % 3]
    lr = [0.05, 0.1, 0.03][seed % 3]
    bs = [32, 48, 64][seed % 3]
    steps = 200
    torch.manual_seed(seed)
    model = HEAPhaseMLP(12, width, depth)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1e-3)
            nn.init.zeros_(m.bias)
    x, y = _descriptors(g, 2000)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
