"""Poverty mapping: deep all-sigmoid MLP classifying DHS clusters into wealth quintiles.

Domain: small-area poverty mapping from geospatial covariates. Each DHS survey cluster is
described by standardised covariates extracted around its (displaced) GPS point: VIIRS night
lights, NDVI, built-up fraction, road density, travel time to the nearest city, population
density, distance to water, elevation, plus their interactions; the label is the cluster's
wealth quintile. The practitioner ports an old MATLAB / Keras-1 style network: every hidden
layer uses activation='sigmoid' (Keras glorot_uniform init, zero bias), 4-6 layers deep,
trained with SGD + momentum.

Mechanism: the logistic sigmoid has derivative <= 0.25 and its outputs are centred at 0.5,
not 0. Each additional sigmoid layer multiplies the back-propagated gradient by <= 0.25 times
the weight scale, and the non-zero mean of the activations pushes the next layer's
pre-activations into the flat tails as the biases drift. With 4-6 such layers the gradient
reaching the early layers is 1e-3-1e-5 of the output gradient; the top layer only learns the
class prior, and the loss stays at ~ln 5 for the whole run, while the same network with ReLU
hidden units learns the covariate-wealth relation.

ORIGIN: "net.1" -- the first sigmoid; the vanishing of the gradient is the product over all
sigmoid layers, and the first one is where the input signal is first squashed (and where the
smallest gradient arrives).

Fix: replace the hidden sigmoids with ReLU (non-saturating activation); same widths, init,
optimiser, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Glorot & Bengio 2010 'Understanding the difficulty of training deep feedforward "
          "networks' (sigmoid saturation in deep nets); small-area poverty mapping from "
          "geospatial covariates (e.g. WorldPop / Steele et al. 2017, DHS wealth quintiles)")


def _act(fixed):
    return nn.ReLU() if fixed else nn.Sigmoid()


class QuintileNet(nn.Module):
    def __init__(self, d_in, width, depth, fixed):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), _act(fixed)]
            d = width
        layers.append(nn.Linear(d, 5))
        self.net = nn.Sequential(*layers)
        for m in self.net:                       # Keras defaults: glorot_uniform, zero bias
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [5, 6, 4][seed % 3]
    width = [64, 96, 128][seed % 3]
    batch = [64, 96, 48][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    d_in = 16
    steps = 150

    w1 = torch.randn(d_in, 8, generator=g) / d_in ** 0.5
    w2 = torch.randn(8, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        score = torch.tanh(x @ w1) @ w2 + 0.8 * x[:, 0] + 0.2 * torch.randn(batch, generator=g)
        # quintile thresholds of the latent wealth score
        y = torch.bucketize(score, torch.tensor([-1.2, -0.4, 0.4, 1.2]) * score.std())
        batches.append((x, y))
    model = QuintileNet(d_in, width, depth, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
