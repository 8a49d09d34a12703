"""Power-transformer fault diagnosis from dissolved-gas analysis (DGA): a deep tanh MLP
classifies an oil sample (H2, CH4, C2H6, C2H4, C2H2, CO, CO2 in ppm, log-scaled and
standardised, plus the three Duval-triangle gas percentages) into IEC 60599 fault classes
(normal, PD, D1/D2 discharge, T1/T2 thermal, T3 thermal).

Mechanism: the model is a port of a Keras model whose Dense layers were declared with
`kernel_initializer=RandomNormal()`; that initialiser's default stddev is 0.05, which the
port reproduces with `nn.init.normal_(w, std=0.05)` on every layer. For a width of 32..48
a tanh layer then multiplies the activation scale by 0.05*sqrt(width) ~ 0.28..0.35, so after
8..10 hidden layers the features reaching the softmax are ~1e-5..1e-4 of the input scale
and the back-propagated gradient shrinks by the same factor on its way down. With momentum
SGD the logits stay at the (balanced) class prior: the cross-entropy sits at ln(6) and
does not move over the run, while the same network with Glorot init trains.

ORIGIN = "net.0": the shrinking starts at the first Linear (its output is already ~half the
scale of its input) and compounds through every following layer; there is no single later
layer at fault, so the first one of the chain is named.

Fix: Glorot/Xavier uniform initialisation (Keras' own default for Dense) with zero
biases; data, depth, width, optimiser and steps unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = (
    "Keras initializers.RandomNormal default stddev=0.05 used for every Dense layer of a "
    "deep tanh DGA classifier, ported 1:1 to PyTorch; vanishing activations/gradients "
    "with depth as analysed by Glorot & Bengio (AISTATS 2010); IEC 60599 / Duval triangle "
    "DGA fault classes."
)

GASES = ["H2", "CH4", "C2H6", "C2H4", "C2H2", "CO", "CO2"]
N_CLASSES = 6   # normal, PD, D1, D2, T1/T2, T3

# typical log10(ppm) centres per class for (H2, CH4, C2H6, C2H4, C2H2, CO, CO2)
_CENTRES = torch.tensor([
    [1.3, 1.0, 1.0, 0.7, -0.5, 2.3, 3.3],   # normal ageing
    [2.8, 1.8, 1.2, 0.3, -0.5, 2.3, 3.3],   # partial discharge: H2 dominant
    [2.3, 1.5, 0.8, 1.3, 1.8, 2.4, 3.3],    # D1 low-energy discharge: C2H2
    [2.5, 2.0, 1.0, 2.2, 2.3, 2.4, 3.4],    # D2 high-energy discharge
    [1.6, 2.2, 2.0, 1.3, -0.3, 2.5, 3.5],   # T1/T2 thermal < 700C: CH4/C2H6
    [1.8, 2.3, 1.6, 2.6, 0.6, 2.6, 3.5],    # T3 thermal > 700C: C2H4
])


def _samples(g, n):
    y = torch.arange(n) % N_CLASSES
    y = y[torch.randperm(n, generator=g)]
    logppm = _CENTRES[y] + 0.35 * torch.randn(n, len(GASES), generator=g)
    ppm = 10 ** logppm
    duval = torch.stack([ppm[:, 1], ppm[:, 4], ppm[:, 3]], 1)            # CH4, C2H2, C2H4
    duval = duval / duval.sum(1, keepdim=True)
    feats = torch.cat([(logppm - 1.8) / 1.0, (duval - 0.33) / 0.25], 1)
    return feats.float(), y


class DGAClassifier(nn.Module):
    def __init__(self, n_in, width, depth, n_out):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, n_out))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    depth = [9, 8, 10][seed % 3]
    width = [40, 48, 32][seed % 3]
    batch = [64, 32, 48][seed % 3]
    lr = [0.05, 0.08, 0.03][seed % 3]
    steps = 200

    g = torch.Generator().manual_seed(2024 + seed)
    batches = [_samples(g, batch) for _ in range(steps)]

    torch.manual_seed(seed)
    model = DGAClassifier(len(GASES) + 3, width, depth, N_CLASSES)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.xavier_uniform_(m.weight)          # Keras Dense default
            else:
                nn.init.normal_(m.weight, 0.0, 0.05)       # keras RandomNormal() default
            nn.init.zeros_(m.bias)

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
