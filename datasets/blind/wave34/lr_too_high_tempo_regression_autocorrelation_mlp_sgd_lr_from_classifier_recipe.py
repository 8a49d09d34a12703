"""Global tempo estimation as regression: an MLP maps the (normalised) autocorrelation of an
onset-strength envelope over 1-4 s lags to log2(BPM) (standardised target); MSE; SGD with
momentum.

Mechanism: the learning rate 0.5-1.0 was carried over from the tempo-*classification* version of
the same model (softmax over 256 tempo classes, where the cross-entropy gradient is bounded).
With MSE and a linear output the curvature is far larger: each step overshoots the minimum along
the steepest directions by more than a factor of two, the error grows geometrically, and within
a few dozen steps the weights and the loss reach inf/NaN.

ORIGIN: None - the step size belongs to the optimiser, no module starts it.

Fix: SGD with lr 0.01 (same momentum, model, data and steps).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Classic SGD divergence when a learning rate tuned for a cross-entropy classifier "
          "is reused for an MSE regressor (LeCun et al. 'Efficient BackProp' 1998: lr above "
          "2/lambda_max diverges); tempo estimation from onset autocorrelation after "
          "Schreiber & Mueller 2018 and Boeck et al. 2015.")

N_LAGS = 96


class TempoMLP(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        layers, d = [], N_LAGS
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        layers += [nn.Linear(d, 1)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _batch(g, B):
    bpm = 60 + 120 * torch.rand(B, generator=g)
    lag_s = torch.linspace(0.25, 1.5, N_LAGS)
    period = 60.0 / bpm
    ac = torch.zeros(B, N_LAGS)
    for k in (1, 2, 3):
        ac += (0.7 ** (k - 1)) * torch.exp(-0.5 * ((lag_s[None] - k * period[:, None]) / 0.03) ** 2)
    ac = ac + 0.1 * torch.rand(B, N_LAGS, generator=g)
    ac = (ac - ac.mean(1, keepdim=True)) / ac.std(1, keepdim=True)
    y = (torch.log2(bpm) - math.log2(110.0)) / 0.5
    return ac, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    hidden = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    B = [32, 16, 64][seed % 3]
    lr = 0.01 if fixed else [0.5, 1.0, 0.7][seed % 3]
    steps = 120
    torch.manual_seed(seed)
    model = TempoMLP(hidden, depth)
    batches = [_batch(g, B) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
