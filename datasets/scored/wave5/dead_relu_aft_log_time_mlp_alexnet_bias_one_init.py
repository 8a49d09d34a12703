"""Accelerated-failure-time (AFT) regressor for pump time-to-failure: a 3-hidden-layer ReLU MLP maps
16 standardised condition-monitoring features to log(time to failure in years), fitted with MSE on
the uncensored records.  To "keep the ReLUs alive" the author followed the AlexNet trick and
initialised every hidden bias to the constant 1.0.  Every unit then starts on for every input and
the hidden activations carry a large common positive offset, so each SGD step moves a unit's
pre-activation in the same direction for all samples.  With momentum the early overshooting steps
drive the third hidden layer entirely (and ~half of the second) negative for every input within the
first tens of steps; the prediction collapses to the output bias and the loss settles at the
variance of log-time.  Keeping PyTorch's default (small, symmetric) bias init is the only change.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.5"
SOURCE = ("Krizhevsky et al. 2012 (AlexNet: biases initialised to 1 'to provide ReLUs with positive "
          "inputs'); Lu et al. 2019 'Dying ReLU and Initialization'; AFT log-time regression as in "
          "Wei 1992 / XGBoost survival:aft")

N_FEAT, H = 16, 64


class AFTNet(nn.Module):
    def __init__(self, bias_one):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(N_FEAT, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(),
                                 nn.Linear(H, H), nn.ReLU(), nn.Linear(H, 1))
        if bias_one:
            for i in (0, 2, 4):
                nn.init.constant_(self.mlp[i].bias, 1.0)

    def forward(self, x):
        return self.mlp(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_FEAT, generator=g) / math.sqrt(N_FEAT)
    steps, bs = 200, 128
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, N_FEAT, generator=g)
        log_t = 2.0 * (x @ w + 0.5 * torch.sin(2.0 * x[:, 1])) + 0.2 * torch.randn(bs, generator=g)
        batches.append((x, log_t))
    model = AFTNet(bias_one=not fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
