"""VICReg on tabular sensor records: MLP backbone + 3-layer expander, SGD with momentum.

Mechanism: the training script re-initialises every nn.Linear with
``nn.init.normal_(w, mean=0.0, std=1.0)`` (a TF/Keras "RandomNormal(stddev=1)" port) instead
of a fan-in scaled init.  With widths of 64-192 each ReLU layer multiplies the activation
scale by roughly sqrt(fan_in / 2) ~ 6-10, so after the backbone and the expander the
embeddings are ~1e2-1e4 in scale at step 0.  The VICReg covariance term squares the
off-diagonal covariances (~scale^2), so the first loss is ~1e12-1e17 and its gradient is just
as large; the first SGD-momentum step throws the weights to astronomically large values and
the next forward pass overflows to inf/NaN.

ORIGIN: ``backbone.0`` - the first Linear is where the per-layer gain > 1 starts; every later
layer only compounds the growth that begins there (the whole stack has the same bad init, the
first layer is where the activation scale first leaves O(1)).

Fix: kaiming-normal (fan_in, ReLU gain) weights and zero biases for every Linear, as in the
reference VICReg code (PyTorch default-style fan-in scaling).  Everything else is unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "backbone.0"
SOURCE = ("VICReg (Bardes et al. 2022) reimplementations where layers were initialised with "
          "RandomNormal(stddev=1.0) ported from Keras; forum reports of VICReg/Barlow loss at "
          "1e18 then NaN in the first iteration")


class VICRegNet(nn.Module):
    def __init__(self, d_in, width, emb, n_exp):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(),
                                      nn.Linear(width, width), nn.ReLU())
        layers = []
        d = width
        for _ in range(n_exp - 1):
            layers += [nn.Linear(d, emb), nn.ReLU()]
            d = emb
        layers.append(nn.Linear(d, emb))
        self.expander = nn.Sequential(*layers)

    def forward(self, xa, xb):
        return self.expander(self.backbone(xa)), self.expander(self.backbone(xb))


def vicreg_loss(out, target):
    za, zb = out
    n, d = za.shape
    inv = F.mse_loss(za, zb)
    za = za - za.mean(0)
    zb = zb - zb.mean(0)
    std_a = torch.sqrt(za.var(0) + 1e-4)
    std_b = torch.sqrt(zb.var(0) + 1e-4)
    var = F.relu(1 - std_a).mean() / 2 + F.relu(1 - std_b).mean() / 2
    cov_a = (za.T @ za) / (n - 1)
    cov_b = (zb.T @ zb) / (n - 1)
    off = ~torch.eye(d, dtype=torch.bool)
    cov = cov_a[off].pow(2).sum() / d + cov_b[off].pow(2).sum() / d
    return 25.0 * inv + 25.0 * var + 1.0 * cov


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [96, 128, 160][seed % 3]
    emb = [64, 96, 128][(seed + 1) % 3]
    n_exp = 2 + seed % 2
    bs = [64, 96, 128][seed % 3]
    lr = [0.02, 0.03, 0.015][seed % 3]
    steps = 120
    d_in, d_lat = 24, 6

    model = VICRegNet(d_in, width, emb, n_exp)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, mean=0.0, std=1.0)
            nn.init.zeros_(m.bias)

    mix = torch.randn(d_lat, d_in, generator=g) / d_lat ** 0.5
    batches = []
    for _ in range(steps):
        lat = torch.randn(bs, d_lat, generator=g)
        x = torch.tanh(lat @ mix) + 0.05 * torch.randn(bs, d_in, generator=g)
        def view():
            keep = (torch.rand(bs, d_in, generator=g) > 0.2).float()
            scale = 1 + 0.1 * torch.randn(bs, 1, generator=g)
            return x * keep * scale + 0.1 * torch.randn(bs, d_in, generator=g)
        batches.append(((view(), view()), torch.zeros(bs)))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-6)
    return dict(model=model, optimizer=opt, loss_fn=vicreg_loss, batches=batches, steps=steps)
