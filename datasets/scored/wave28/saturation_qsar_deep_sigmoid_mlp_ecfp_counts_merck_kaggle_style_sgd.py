"""Deep QSAR regressor in the style of the 2012 Merck Kaggle challenge networks: folded
ECFP4 count fingerprints (log1p-transformed) -> 5-7 fully-connected sigmoid hidden layers
(kaiming-normal init from the group's ReLU template, zero-initialised output layer) ->
standardised pIC50; MSE, SGD with momentum.

Mechanism (saturation): the hidden units are logistic sigmoids. sigma'(z) <= 0.25
everywhere (and smaller off-centre), and their outputs live in (0, 1) around 0.5, so most of
each layer's output is a per-unit constant that carries no information about the molecule.
The sample-to-sample variation of the representation shrinks by a factor ~0.3 per layer and
the back-propagated gradient by about the same factor, so after 5-7 layers the last hidden
layer is (almost) the same vector for every molecule and the early layers receive ~1e-4 of
the gradient the head gets. With standardised targets the head can only fit the mean, and
the loss stalls at the target variance.

ORIGIN: `body.1`, the first Sigmoid: the attenuation (forward signal and backward gradient)
happens at every sigmoid, and it starts at the first one.

Fix: ReLU instead of Sigmoid in the hidden layers (non-saturating activation; the kaiming
init was written for it), nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "body.1"
SOURCE = ("Ma, Sheridan et al., 'Deep neural nets as a method for quantitative structure-"
          "activity relationships', J. Chem. Inf. Model. 2015 (sigmoid vs ReLU hidden "
          "units on the Merck Kaggle QSAR sets); vanishing gradients through stacked "
          "sigmoids (Glorot & Bengio 2010)")

N_BITS = 256


def _fingerprints(g, n):
    # sparse count fingerprints: each molecule switches on ~30 of 256 folded bits
    on = torch.rand(n, N_BITS, generator=g) < 0.12
    cnt = torch.randint(1, 5, (n, N_BITS), generator=g).float() * on
    w1 = torch.randn(N_BITS, generator=torch.Generator().manual_seed(21)) * 0.4
    pair_a = torch.randint(0, N_BITS, (40,), generator=torch.Generator().manual_seed(22))
    pair_b = torch.randint(0, N_BITS, (40,), generator=torch.Generator().manual_seed(23))
    lin = torch.log1p(cnt) @ w1
    inter = ((cnt[:, pair_a] > 0) & (cnt[:, pair_b] > 0)).float().sum(1)
    y = lin + 0.8 * inter - 0.05 * lin ** 2 + 0.3 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    return torch.log1p(cnt), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    depth = [5, 6, 7][seed % 3]
    width = [128, 96, 160][seed % 3]
    bs = [64, 96, 128][seed % 3]
    lr = [0.02, 0.03, 0.015][seed % 3]
    steps = 200

    layers, d = [], N_BITS
    for _ in range(depth):
        lin = nn.Linear(d, width)
        nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.ReLU() if fixed else nn.Sigmoid()]
        d = width
    model = nn.Sequential()
    model.add_module("body", nn.Sequential(*layers))
    model.add_module("head", nn.Linear(d, 1))
    nn.init.zeros_(model.head.weight)          # zero-init output layer (starts at the mean)
    nn.init.zeros_(model.head.bias)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, y):
        return F.mse_loss(out.squeeze(-1), y)

    x, y = _fingerprints(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
