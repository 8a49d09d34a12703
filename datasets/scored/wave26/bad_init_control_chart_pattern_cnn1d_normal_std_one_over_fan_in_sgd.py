"""SPC control-chart pattern recognition (CCPR) with a BN-free 1-D CNN.

Mechanism: six Western-Electric style patterns (normal, cyclic, up/down trend,
up/down shift; Alcock & Manolopoulos synthetic control chart data) are classified
from 60-sample windows of a standardised process variable by a plain stack of
Conv1d+ReLU layers without normalisation. The hand-written init uses
``std = 1 / fan_in`` (the *variance* formula 1/fan_in of LeCun init typed as a standard
deviation). With fan_in = C_in * k = 160..320 the per-layer gain is
sqrt(fan_in / 2) / fan_in ~ 0.04-0.06, so the activation scale shrinks geometrically
(~20x per layer) through the 4-6 conv layers from step 0. The logits are ~1e-8, the
gradients of all but the last layers vanish, and SGD+momentum sits at ln(6) for the
whole run: a stall with finite losses.

ORIGIN: ``features.0`` - the first convolution; the shrinkage starts there and
compounds through every following conv (no single later layer is special).

Fix: He/Kaiming normal init (std = sqrt(2 / fan_in)) for every conv/linear layer;
same architecture, data, optimiser, learning rate and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Alcock & Manolopoulos 1999 synthetic control chart time series (UCI); CNN-based "
          "control chart pattern recognition (e.g. Zan et al. 2019); the 'variance used as std' "
          "init mistake discussed on PyTorch forums / CS231n notes on weight scale collapse.")

N_CLASSES = 6


def _charts(g, n, L=60):
    t = torch.arange(L, dtype=torch.float32)[None, :]
    cls = torch.randint(0, N_CLASSES, (n,), generator=g)
    base = 30 + 2 * torch.randn(n, L, generator=g)
    amp = 10 + 5 * torch.rand(n, 1, generator=g)
    per = 10 + 5 * torch.rand(n, 1, generator=g)
    grad = 0.2 + 0.3 * torch.rand(n, 1, generator=g)
    shift = 7.5 + 12.5 * torch.rand(n, 1, generator=g)
    t0 = torch.randint(L // 3, 2 * L // 3, (n, 1), generator=g)
    step = (t >= t0).float()
    pats = [torch.zeros(n, L), amp * torch.sin(2 * math.pi * t / per), grad * t, -grad * t,
            shift * step, -shift * step]
    x = base.clone()
    for c in range(N_CLASSES):
        m = cls == c
        x[m] += pats[c][m]
    x = (x - 30.0) / 10.0  # operators' standardisation with the chart's target and a spread
    return x[:, None, :], cls


class CCPRNet(nn.Module):
    def __init__(self, depth, ch, k=5):
        super().__init__()
        layers, c_in = [], 1
        for _ in range(depth):
            layers += [nn.Conv1d(c_in, ch, k, padding=k // 2), nn.ReLU()]
            c_in = ch
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(ch, N_CLASSES)

    def forward(self, x):
        return self.head(self.features(x).mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    depth = [5, 6, 4][seed % 3]
    ch = [48, 32, 64][seed % 3]
    lr = [0.02, 0.012, 0.01][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 150
    model = CCPRNet(depth, ch)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            fan_in = m.weight[0].numel()
            with torch.no_grad():
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    m.weight.normal_(0.0, 1.0 / fan_in)  # variance formula typed as std
                m.bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_charts(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
