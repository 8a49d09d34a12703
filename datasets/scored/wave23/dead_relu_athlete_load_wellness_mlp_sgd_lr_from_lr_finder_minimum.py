"""Athlete-monitoring MLP (training load -> next-day wellness) whose last hidden ReLUs die at lr=2.

Mechanism: a sports-science MLP maps an athlete's last 7 daily GPS/RPE loads, 4 weekly chronic
loads, sleep and HRV covariates to three z-scored next-day wellness scores (fatigue, soreness,
readiness), trained with MSE and plain SGD. The learning rate was read off an LR-range test
(lr_find) at the *minimum* of the loss curve instead of an order of magnitude below it, giving
lr = 1.6-2. The first updates overshoot; each overshoot is corrected by a gradient that pushes
the active units of the last hidden layer down hard, and within a few dozen steps nearly every
unit of that layer is negative for every athlete-day. Those ReLUs never fire again, the head
sees a constant, and the loss sits at the variance of the targets for the rest of the run (a
stall; no inf/NaN) while the same network at lr=0.2 learns the load-response curve.

ORIGIN = "top_act": the ReLU after the last hidden Linear is where the units die (~95-100% of them
dead for all inputs at the end, against far fewer in the earlier layers); once it is dead the
earlier layers receive no gradient.

Fix: lr = 0.2 (an order of magnitude below the lr_find minimum, the usual rule); same model, data,
optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "top_act"
SOURCE = ("CS231n notes on dying ReLUs at high learning rates ('as much as 40% of your network can be "
          "dead'); Lu et al. 2019 'Dying ReLU and initialization'; fastai lr_find advice to pick a "
          "rate well below the loss minimum; acute:chronic workload ratio wellness models")


class WellnessMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth - 1):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.top = nn.Linear(d, width)
        self.top_act = nn.ReLU()
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        return self.head(self.top_act(self.top(self.body(x))))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    width = [64, 96, 128][seed % 3]
    depth = [3, 4, 3][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = 0.2 if fixed else [1.6, 1.8, 2.0][seed % 3]
    steps = 200
    d_in = 16
    torch.manual_seed(seed)
    model = WellnessMLP(d_in, width, depth)
    n = bs * steps
    x = torch.randn(n, d_in, generator=g)                  # z-scored loads and covariates
    acute = x[:, :7].mean(1)
    chronic = x[:, 7:11].mean(1)
    acwr = acute - chronic                                 # log acute:chronic ratio proxy
    y = torch.stack([torch.tanh(1.5 * acwr) + 0.3 * x[:, 11],
                     torch.relu(acute) - 0.5 * x[:, 12] * x[:, 13],
                     0.8 * x[:, 14] - 0.4 * torch.relu(acwr) ** 2], 1)
    y = y + 0.1 * torch.randn(y.shape, generator=g)
    y = (y - y.mean(0)) / y.std(0)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
