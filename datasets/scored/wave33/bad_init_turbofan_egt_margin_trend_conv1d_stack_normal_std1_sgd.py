"""Turbofan EGT-margin regressor from a window of per-flight take-off snapshots (1-D CNN).

Mechanism: an engine-health-monitoring team regresses the exhaust-gas-temperature margin of
the next shop-visit interval from the last 64 take-off snapshots (EGT, N1, N2, fuel flow,
ambient temperature, bleed flag, ...). The Conv1d stack is initialised with
``nn.init.normal_(w, 0, 1)`` (std 1, as in a Keras ``RandomNormal(stddev=1.0)`` port), no
normalisation layers. With 5 * C_in fan-in per output unit each conv multiplies the activation
scale by ~sqrt(5 * C / 2) ~ 9-12, geometrically with depth from step 0: after 5-7 layers the
prediction is ~1e5-1e7 in standardised units, the MSE is ~1e12 and the first SGD step is large
enough to send the weights (and then the loss) to inf/NaN.

ORIGIN: ``features.0`` - the first Conv1d is where the geometric growth starts; every
subsequent conv multiplies the already-too-large signal by the same excess gain.

Fix: Kaiming-normal (fan_in, relu) initialisation of the conv and linear weights.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Known pattern: Keras RandomNormal(stddev=1.0) / torch normal_(0, 1) init in deep plain "
          "CNNs explodes activations geometrically (He et al. 2015); EGT-margin trend models on "
          "ACARS take-off snapshots as in engine condition-monitoring practice.")


class EGTMarginCNN(nn.Module):
    def __init__(self, c_in, width, depth):
        super().__init__()
        layers, c = [], c_in
        for _ in range(depth):
            layers += [nn.Conv1d(c, width, 5, padding=2), nn.ReLU()]
            c = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        h = self.features(x).mean(-1)
        return self.head(h).squeeze(-1)


def _snapshots(g, n, T=64):
    cycles = torch.arange(T).float() / T
    wear = torch.rand(n, 1, generator=g) * 2
    rate = torch.rand(n, 1, generator=g) * 1.5
    oat = torch.randn(n, T, generator=g)
    egt = wear + rate * cycles + 0.5 * oat + 0.2 * torch.randn(n, T, generator=g)
    n1 = 0.3 * oat + 0.1 * torch.randn(n, T, generator=g)
    n2 = 0.5 * wear + 0.1 * torch.randn(n, T, generator=g)
    ff = 0.6 * egt + 0.2 * torch.randn(n, T, generator=g)
    bleed = (torch.rand(n, T, generator=g) < 0.3).float() - 0.3
    x = torch.stack([egt, n1, n2, ff, oat, bleed], 1)
    y = -(wear.squeeze(1) + 1.3 * rate.squeeze(1)) + 0.1 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    depth = [5, 6, 7][seed % 3]
    width = [32, 24, 48][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 120
    model = EGTMarginCNN(6, width, depth)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    x, y = _snapshots(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
