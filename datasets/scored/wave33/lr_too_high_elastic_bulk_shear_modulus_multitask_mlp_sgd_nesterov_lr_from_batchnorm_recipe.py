"""Elastic-property screening: a two-output (log10 K_VRH, log10 G_VRH) SiLU MLP on standardised
composition + structure descriptors (mean atomic volume, packing fraction, average bond length,
cohesive-energy proxy, valence-electron density, ...) as in AFLOW-ML / MP elasticity models.
MSE summed over the two targets, SGD with Nesterov momentum.

Mechanism: the lr (and momentum 0.9, Nesterov) was copied from a BatchNorm ResNet recipe where
lr ~ 0.5-1 is routine; this MLP has no normalisation layers. The effective step is lr/(1-m) ~
5-10x the curvature limit of the loss; the first update already overshoots the minimum, the
next overshoots further, and the weights grow geometrically in an oscillation whose amplitude
multiplies every step. Within a few dozen steps the outputs and the loss pass 1e38 and become
inf / NaN. Data, targets and init are all clean.

ORIGIN: None (lr_too_high): the instability is global, every layer's update/weight ratio is far
above ~1e-3 from the first step.

Fix: lr 0.01 (same Nesterov momentum, model, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: learning rate copied from a BatchNorm image recipe to an un-normalised "
          "regression MLP diverges ('loss goes to nan after a few iterations' forum threads; "
          "Goyal et al. 2017 on the lr scaling limits); elasticity ML on Materials Project / AFLOW "
          "data (de Jong et al. 2016, Isayev et al. 2017).")


class ElasticMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, c = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(c, width), nn.SiLU()]
            c = width
        layers.append(nn.Linear(c, 2))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [3, 4, 2][seed % 3]
    width = [128, 64, 256][seed % 3]
    lr = [0.8, 0.5, 1.0][seed % 3]
    if fixed:
        lr = 0.01
    bs = [64, 32, 128][seed % 3]
    steps = 120
    n_feat = 20
    torch.manual_seed(seed)
    model = ElasticMLP(n_feat, width, depth)
    x = torch.randn(4000, n_feat, generator=g)
    w1 = torch.randn(n_feat, generator=g) / n_feat ** 0.5
    w2 = torch.randn(n_feat, generator=g) / n_feat ** 0.5
    logK = 2.0 + 0.4 * (x @ w1) + 0.1 * torch.tanh(x[:, 0] * x[:, 1])
    logG = 0.8 * logK - 0.1 + 0.3 * (x @ w2) * 0.5
    y = torch.stack([logK, logG], 1)
    y = (y - y.mean(0)) / y.std(0)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)

    def loss_fn(out, target):
        return ((out - target) ** 2).sum(1).mean()

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
