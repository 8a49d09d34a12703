"""Weekly hospitalisation-rate forecaster: GRU encoder with a ReLU on the output "to keep forecasts non-negative" (SGD+momentum, MSE).

Mechanism: the model reads 16 weeks of (hospitalisations per 100k, ILI %, test positivity) per
state and predicts next week's hospitalisations per 100k (0-20, mean ~5, not standardised
because the forecast hub wants rates). The author puts ``nn.ReLU()`` after the final Linear so
that forecasts are never negative, and zero-initialises that final Linear ("start from a flat
forecast", the zero-init-last-layer trick). The head's pre-activation is then exactly 0 for
every input, and PyTorch's ReLU gradient at 0 is 0: the output unit is dead from step 0, the
head receives no gradient, nothing upstream receives a gradient, and no parameter ever moves.
The loss plateaus at mean(y^2) (the "model forecasts all zeros" failure), with no inf/NaN.

ORIGIN: "out_act", the output ReLU: it is the unit that dies, and it cuts the gradient to every
module below it.

Fix: a non-negative output without a dead zone: ``nn.Softplus()`` instead of the output ReLU
(same model, data, optimiser and steps).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("Common 'model predicts all zeros' reports with a ReLU output layer for count/rate "
          "regression (PyTorch forums, StackOverflow 'dying ReLU on the output layer'); "
          "Lu et al. 2019 'Dying ReLU and initialization'")


class HospForecaster(nn.Module):
    def __init__(self, hidden, layers, fixed):
        super().__init__()
        self.gru = nn.GRU(3, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.out_act = nn.Softplus() if fixed else nn.ReLU()

    def forward(self, x):
        h, _ = self.gru(x)
        return self.out_act(self.head(h[:, -1])).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 40, 24][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [0.02, 0.03, 0.015][seed % 3]
    bs = [32, 24, 48][seed % 3]
    steps = 150
    T = 16
    N = steps * bs
    t = torch.arange(T + 1).float()
    peak = torch.rand(N, 1, generator=g) * 30
    height = 2.0 + 10.0 * torch.rand(N, 1, generator=g)
    hosp = height * torch.exp(-((t - peak) / 5.0) ** 2) + 0.5 + 0.2 * torch.rand(N, T + 1, generator=g)
    ili = 0.3 * hosp + 0.3 * torch.randn(N, T + 1, generator=g)
    pos = 0.02 * hosp + 0.01 * torch.randn(N, T + 1, generator=g)
    X = torch.stack([hosp[:, :T] / 5.0, ili[:, :T] / 2.0, pos[:, :T] * 10], -1)
    Y = hosp[:, T]

    model = HospForecaster(hidden, layers, fixed)
    # "zero-init the last layer" so the untrained model starts from a flat forecast
    nn.init.zeros_(model.head.weight)
    nn.init.zeros_(model.head.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
