"""Turbofan gas-path fault isolation from measurement deltas: deep sigmoid MLP (SGD).

Mechanism: engine-health analysts isolate which module is degraded (fan, LPC, HPC, HPT, LPT
efficiency/flow-capacity loss, or a sensor bias) from the standardised deltas of the gas-path
measurements (N1, N2, EGT, Wf, P3, T3, ...) versus the engine model baseline. The classifier is a
6-9 layer MLP with logistic-sigmoid hidden units, as in the 1990s-2000s gas-path neural
network papers, trained with plain SGD. Sigmoid derivatives are at most 0.25 and the hidden
activations sit around 0.5 (non-zero mean), so the back-propagated gradient shrinks by a
factor ~4+ per layer; the early layers receive essentially nothing, the top layer sees
features that carry almost no class information, and the cross-entropy stays near log(C) -
a stall without any non-finite value.

ORIGIN: ``net.1`` - the first Sigmoid; the vanishing starts in the saturating units nearest the
input, whose gradient is the product of all the sigmoid derivatives above them.

Fix: ReLU hidden units (a non-saturating activation) with the He-normal init that goes with
them; depth, width, optimiser, lr and data are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Known pattern: vanishing gradients in deep sigmoid MLPs (Glorot & Bengio 2010); gas-path "
          "diagnostics neural networks for turbofan fault isolation (Volponi et al., NASA "
          "TM-2003-212528 style measurement-delta classifiers).")


def _deltas(g, n, n_cls, n_meas=10):
    gen = torch.Generator().manual_seed(7)
    signatures = torch.randn(n_cls, n_meas, generator=gen)      # fault influence coefficients
    y = torch.randint(0, n_cls, (n,), generator=g)
    sev = 0.5 + torch.rand(n, 1, generator=g)
    x = sev * signatures[y] + 0.35 * torch.randn(n, n_meas, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(121 + seed)
    depth = [6, 8, 9][seed % 3]
    width = [64, 48, 96][seed % 3]
    n_cls = [8, 7, 9][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 150
    act = nn.ReLU if fixed else nn.Sigmoid
    layers, d = [], 10
    for _ in range(depth):
        layers += [nn.Linear(d, width), act()]
        d = width
    layers.append(nn.Linear(d, n_cls))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    if fixed:  # He init goes with the ReLU units
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
    x, y = _deltas(g, bs * steps, n_cls)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
