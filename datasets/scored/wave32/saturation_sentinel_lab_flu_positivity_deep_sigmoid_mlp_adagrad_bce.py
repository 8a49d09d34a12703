"""Sentinel-lab influenza positivity classifier: deep MLP with sigmoid hidden units (Adagrad, BCE-with-logits).

Mechanism: each row is one specimen at a sentinel laboratory (standardised age, days since
symptom onset, week-of-season harmonics, regional ILI %, prior-week positivity, 8 more
covariates); the label is a positive influenza PCR. The author stacks 6-8 Linear+Sigmoid hidden
layers ("probabilities all the way down", as in early epidemiological neural-net papers). With
the default fan-in init the sigmoid units sit around 0.5 with a non-zero mean, their derivative
is at most 0.25, and each layer multiplies the backpropagated gradient by ~0.25*|W| < 0.1; the
first layers receive gradients 1e-5-1e-8 times those of the head. Adagrad's per-parameter
normalisation cannot rescue it, because the accumulated squared gradients of the top layers are
dominated by the early steps; the head only learns the base rate from a nearly constant
representation, and the loss stalls near the prior entropy, with no inf/NaN.

ORIGIN: "net.1", the first Sigmoid: it is the first saturating unit in the stack, where the
gradient attenuation begins (and the layers below it are the ones that stop learning).

Fix: a non-saturating activation (ReLU) in the hidden stack, same depth, init, optimiser, lr
and data.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Glorot & Bengio 2010 'Understanding the difficulty of training deep feedforward neural "
          "networks' (sigmoid saturation in deep nets); Hochreiter 1991 vanishing gradients")


class PositivityNet(nn.Module):
    def __init__(self, d_in, width, depth, act):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), act()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [0.05, 0.08, 0.04][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 200
    N = steps * bs
    X = torch.randn(N, 14, generator=g)
    logit = 4.0 * (0.9 * X[:, 0] * X[:, 1] - 0.7 * X[:, 2] * X[:, 3] + 0.5 * X[:, 4] * X[:, 5])
    Y = (torch.rand(N, generator=g) < torch.sigmoid(logit)).float()
    model = PositivityNet(14, width, depth, nn.ReLU if fixed else nn.Sigmoid)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
