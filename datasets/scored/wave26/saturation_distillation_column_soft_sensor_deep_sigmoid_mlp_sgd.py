"""Distillation-column soft sensor: a deep all-sigmoid MLP predicts top-product purity.

Mechanism: plant historians give tray temperatures, reflux ratio, reboiler duty,
feed rate/composition and column pressure (20 standardised tags); the target is
the lab-measured top-product impurity (standardised). The model follows the classic
1990s soft-sensor recipe - a multilayer perceptron with logistic sigmoid hidden units -
but made "deep" (5-6 hidden layers). sigmoid'(z) <= 0.25 and the default PyTorch init keeps
the per-layer gain well below one, so the backpropagated signal shrinks by ~4-10x per
layer; all hidden layers sit around 0.5 with vanishing gradients and the first
layers receive ~1e-6 of the gradient of the last. SGD only fits the output bias:
the loss stays at the target variance (a stall with finite values).

ORIGIN: ``net.1`` - the first sigmoid; the attenuation starts there and compounds
through every sigmoid that follows.

Fix: a non-saturating activation (ReLU) in the same layers, same init, data,
optimiser, learning rate and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Neural soft sensors with sigmoid MLPs in process industry (Fortuna et al. 2007 'Soft "
          "Sensors for Monitoring and Control of Industrial Processes'; Kadlec et al. 2009 review); "
          "Glorot & Bengio 2010 on sigmoid saturation/vanishing gradients in deep nets.")


class SoftSensor(nn.Module):
    def __init__(self, depth, width, act):
        super().__init__()
        layers, d = [], 20
        for _ in range(depth):
            layers += [nn.Linear(d, width), act()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def _plant(g, n, W1, W2):
    x = torch.randn(n, 20, generator=g)
    # impurity: nonlinear in temperature profile, reflux/duty balance and feed composition
    h = torch.tanh(x @ W1)
    y = h @ W2 + 0.3 * x[:, 0] * x[:, 1] + 0.1 * torch.randn(n, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(404 + seed)
    depth = [6, 6, 5][seed % 3]
    width = [64, 96, 48][seed % 3]
    lr = [0.1, 0.05, 0.08][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 200
    W1 = torch.randn(20, 16, generator=g) / 20 ** 0.5 * 1.5
    W2 = torch.randn(16, generator=g) / 4
    _, yr = _plant(torch.Generator().manual_seed(1), 10000, W1, W2)
    mu, sd = yr.mean(), yr.std()
    model = SoftSensor(depth, width, nn.ReLU if fixed else nn.Sigmoid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for _ in range(steps):
        x, y = _plant(g, bs, W1, W2)
        batches.append((x, ((y - mu) / sd)[:, None]))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
