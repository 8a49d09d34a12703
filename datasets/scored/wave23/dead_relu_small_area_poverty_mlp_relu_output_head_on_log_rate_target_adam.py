"""Small-area poverty estimation MLP whose output passes through a ReLU, trained on log rates.

Mechanism: a survey-to-census small-area model (in the spirit of satellite/census poverty
mapping) regresses a district's poverty rate on census tract covariates (household size,
literacy, electrification, night-lights, distance to market, ...). The author put
``nn.ReLU()`` after the last Linear "because a poverty rate can't be negative", and later
switched the target to the log of the survey headcount ratio to tame its skew, so every
target is negative (log of 0.03..0.7). The output ReLU passes no gradient where its
pre-activation is negative, and for the districts where it is positive the gradient pushes it
down; within a few Adam steps the single output unit is negative for every district. From
then on every prediction is exactly 0, every gradient is exactly 0, and the loss sits at
E[y^2] for the rest of the run (a stall; no non-finite value).

ORIGIN = "out_act": the dying unit is the output ReLU itself; the hidden layers are healthy
until the dead output cuts off all gradient to them.

Fix: drop the output clamp (identity head on the log-rate target; exp() of the prediction is
already non-negative); same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("'regression output always zero / loss stuck' forum threads caused by a ReLU on the last "
          "layer with negative targets; census/survey small-area estimation MLPs "
          "(e.g. night-lights poverty mapping replications) after a log-transformed target was adopted")


class PovertyMLP(nn.Module):
    def __init__(self, d_in, width, depth, fixed):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)
        self.out_act = nn.Identity() if fixed else nn.ReLU()

    def forward(self, x):
        return self.out_act(self.out(self.body(x))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(5000 + seed)
    width = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 150
    d_in = 14
    torch.manual_seed(seed)
    model = PovertyMLP(d_in, width, depth, fixed)
    n = bs * steps
    x = torch.randn(n, d_in, generator=g)
    logit_rate = (-0.8 * x[:, 0] + 0.6 * x[:, 1] - 0.5 * x[:, 2] * (x[:, 3] > 0).float()
                  + 0.4 * torch.tanh(2 * x[:, 4]) + 0.3 * x[:, 5] * x[:, 6])
    rate = torch.sigmoid(logit_rate - 0.7)                       # poverty headcount ratio
    # survey-based direct estimate: binomial sampling noise of ~200 households per district
    rate = rate + torch.sqrt(rate * (1 - rate) / 200) * torch.randn(n, generator=g)
    y = torch.log(rate.clamp(0.02, 0.95))                        # log headcount ratio (< 0)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
