"""C-MAPSS-style remaining-useful-life regression with a BN-free 1D CNN (Babu et al. 2016 /
Li et al. 2018 style: stacked Conv1d over a window of 14 sensor channels x 30 cycles).

Mechanism: the user ported a Keras model and reproduced `RandomNormal(stddev=1.0)` by
calling nn.init.normal_(w, 0, 1) on every Conv1d / Linear.  With fan-in 14*k or C*k per
layer the ReLU activations grow by ~sqrt(fan_in/2) ~ 8-10x per layer from step 0, so the
RUL prediction is ~1e4-1e6 on the first batch, the MSE and its gradients are astronomically
large and the first SGD step sends the weights to inf/NaN.

ORIGIN: the first conv `features.0` is where the geometric activation growth begins (it is
the first badly initialised layer; every later layer multiplies the blow-up).

Fix: kaiming_normal_ (fan_in, relu) init, zero bias -- nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = "Keras RandomNormal(stddev=1) ported to PyTorch in C-MAPSS RUL CNN repos (Babu 2016 / Li 2018 style 1D CNN); classic exploding-activation bad init"

_CFG = {0: dict(ch=10, k=11, depth=4, lr=1e-3, bs=32, steps=80),
        1: dict(ch=16, k=9, depth=3, lr=5e-4, bs=48, steps=100),
        2: dict(ch=12, k=7, depth=5, lr=2e-3, bs=24, steps=70)}


def _data(g, n, win=30, sens=14):
    # degradation level in [0,1]; sensors drift with exponential wear + noise
    d = torch.rand(n, 1, 1, generator=g)
    t = torch.linspace(0, 1, win).view(1, 1, win)
    coef = torch.linspace(-1.0, 1.0, sens).view(1, sens, 1)
    wear = (d + 0.3 * t * d) ** 2
    x = coef * wear + 0.15 * torch.randn(n, sens, win, generator=g)
    rul = (1.0 - d.view(n, 1)).clamp(0, 1) * 1.25  # piecewise-linear RUL, normalised by 100 cycles
    return x, rul


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    layers, cin = [], 14
    for i in range(c["depth"]):
        layers += [nn.Conv1d(cin, c["ch"], c["k"], padding="same"), nn.ReLU()]
        cin = c["ch"]
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(*layers))
    model.add_module("flat", nn.Flatten())
    model.add_module("head", nn.Sequential(nn.Linear(cin * 30, 64), nn.ReLU(), nn.Linear(64, 1)))
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)  # Keras RandomNormal(stddev=1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=0.9)
    batches = [_data(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"])
