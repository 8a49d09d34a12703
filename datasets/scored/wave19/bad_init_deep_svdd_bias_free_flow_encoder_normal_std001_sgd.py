"""One-class Deep SVDD on benign network-flow features, encoder initialised N(0, 0.01).

Mechanism: Deep SVDD (Ruff et al., ICML 2018) maps normal data into a hypersphere around
a centre c fixed from an initial forward pass; the encoder must be bias-free (otherwise it
collapses). The user initialises all Linear weights with `normal_(0, 0.01)` (Caffe-style
gaussian filler). With fan-in 16-64 and ReLU, each layer multiplies the activation scale by
~0.01 * sqrt(fan_in / 2) ~ 0.05, so the 4-layer encoder outputs ~1e-6. The centre computed
from that output is then pushed to +-eps by the reference `init_center_c` (|c_i| < eps ->
+-eps), so the loss ||phi(x) - c||^2 is ~rep_dim * eps^2 and its gradient w.r.t. every weight
is multiplied by the vanishing activations/weights of the other layers: SGD cannot move the
features and the loss stays flat for the whole run.

ORIGIN: `encoder.0`, the first Linear: the activation scale collapses from the very first
layer onwards (geometric shrinkage with depth); no activation saturates and the data is clean.

Fix: Kaiming-normal (fan_in, relu) init of the same bias-free layers.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("Ruff et al. 2018 'Deep One-Class Classification' (Deep-SVDD-PyTorch: bias-free "
          "encoder, init_center_c with eps=0.1); Caffe gaussian std=0.01 filler ported "
          "to an MLP flow encoder -> flat one-class loss")


class FlowEncoder(nn.Module):
    def __init__(self, d_in, widths, rep_dim):
        super().__init__()
        layers = []
        prev = d_in
        for w in widths:
            layers += [nn.Linear(prev, w, bias=False), nn.ReLU()]
            prev = w
        layers.append(nn.Linear(prev, rep_dim, bias=False))
        self.encoder = nn.Sequential(*layers)

    def forward(self, x):
        return self.encoder(x)


class SVDDLoss(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.register_buffer("c", c)

    def forward(self, z, _target):
        return ((z - self.c) ** 2).sum(dim=1).mean()


def _benign_flows(g, n, d_in, mix, k):
    # benign flows live near a low-dimensional manifold of standardised flow statistics
    z = torch.randn(n, k, generator=g)
    return torch.tanh(z @ mix) + 0.05 * torch.randn(n, d_in, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    cfg = [
        dict(d_in=24, widths=[64, 32, 32], rep_dim=16, lr=0.05, bs=64, steps=120),
        dict(d_in=32, widths=[96, 64, 48, 32], rep_dim=24, lr=0.01, bs=128, steps=100),
        dict(d_in=20, widths=[48, 40, 32], rep_dim=12, lr=0.015, bs=48, steps=140),
    ][seed % 3]
    model = FlowEncoder(cfg["d_in"], cfg["widths"], cfg["rep_dim"])
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)

    mix = torch.randn(4, cfg["d_in"], generator=g) * 1.5
    batches = [(_benign_flows(g, cfg["bs"], cfg["d_in"], mix, 4), torch.zeros(cfg["bs"]))
               for _ in range(cfg["steps"])]

    # init_center_c from the reference implementation: mean of an initial forward pass
    with torch.no_grad():
        calib = _benign_flows(g, 512, cfg["d_in"], mix, 4)
        c = model(calib).mean(0)
        eps = 0.1
        c[(c.abs() < eps) & (c < 0)] = -eps
        c[(c.abs() < eps) & (c >= 0)] = eps

    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9,
                                weight_decay=1e-6)
    return dict(model=model, optimizer=optimizer, loss_fn=SVDDLoss(c), batches=batches,
                steps=cfg["steps"])
