"""Soil-moisture profile regressor: a deep ReLU MLP initialised the TF1 way (N(0, 0.01)).

Mechanism: a plain MLP maps per-site covariates (sand/clay fraction, organic carbon, bulk
density, NDVI, lagged rainfall, air temperature, ...) to volumetric water content at four
depths. Every Linear is initialised with ``nn.init.normal_(w, 0.0, 0.01)`` and zero bias, the
``tf.random_normal_initializer(stddev=0.01)`` habit carried over from an old TF1 notebook. With
fan-in 64-128 each layer multiplies the activation scale by about 0.01*sqrt(fan_in/2) ~ 0.06-0.08,
so after 6-8 layers the signal reaching the head is ~1e-8 of the input and the backward signal to
the first layers is as small. The net outputs its bias only; the loss sits at the target
variance and SGD+momentum cannot get out of the plateau within the run (a stall, all values
finite).

ORIGIN = "net.0": the geometric shrinkage starts at the first Linear (the first layer whose
weights are too small) and compounds through every later one; no later layer is more to blame.

Fix: ``nn.init.kaiming_normal_(w, nonlinearity="relu")`` (He init) for the hidden layers; same
data, depth, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("TF1-era tf.random_normal_initializer(stddev=0.01) ported to deep PyTorch MLPs; "
          "Glorot & Bengio 2010 / He et al. 2015 on vanishing activation variance with depth; "
          "common 'loss stuck at variance of targets' threads on deep regressors")


def _make_data(g, n, d_in):
    x = torch.randn(n, d_in, generator=g)
    sand, clay, oc, ndvi, rain1, rain7, temp = x[:, 0], x[:, 1], x[:, 2], x[:, 3], x[:, 4], x[:, 5], x[:, 6]
    base = 0.6 * clay - 0.5 * sand + 0.3 * oc
    wet = torch.tanh(0.8 * rain1 + 0.5 * rain7) - 0.3 * temp * (1 + 0.3 * ndvi)
    depths = []
    for k, w in enumerate([1.0, 0.7, 0.45, 0.25]):
        depths.append(base + w * wet + (1 - w) * 0.4 * torch.relu(rain7 - 0.5) + 0.2 * k * ndvi * clay)
    y = torch.stack(depths, 1)
    y = y + 0.05 * torch.randn(y.shape, generator=g)
    y = (y - y.mean(0)) / y.std(0)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [6, 7, 8][seed % 3]
    width = [128, 96, 112][seed % 3]
    lr = [0.02, 0.03, 0.025][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 200
    d_in = 12
    torch.manual_seed(seed)
    layers = []
    d = d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 4))
    class SoilMLP(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x)

    model = SoilMLP(nn.Sequential(*layers))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    x, y = _make_data(g, bs * steps, d_in)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
