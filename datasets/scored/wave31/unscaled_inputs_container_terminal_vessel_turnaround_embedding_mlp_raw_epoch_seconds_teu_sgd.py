"""Container-terminal berth planning: an MLP (berth embedding + numeric features) that predicts a
vessel's turnaround time in hours.

Mechanism: the numeric features go into the network exactly as they come out of the terminal
operating system export: the scheduled arrival as Unix epoch seconds (~1.7e9, the pandas
``.astype('int64') // 10**9`` idiom), the crane moves in TEU (500-9000), the length overall in metres,
the yard occupancy in percent, the crane count, and the target in raw hours (10-80). The first
Linear's pre-activations are ~1e8-1e9 on step 0, the prediction is ~1e6-1e8 hours, the MSE is
~1e13-1e15 and its gradient with respect to the first-layer weights carries another factor 1.7e9
from the epoch column. The first SGD update throws the weights to astronomically large values and
the next forward pass overflows to inf / NaN.

ORIGIN: ``mlp.0`` -- the first Linear, the layer the raw features enter; everything after it only
propagates its huge outputs.

Fix: standardise every numeric feature (z-score with training-set statistics, the epoch expressed
as days since the start of the planning horizon before scaling) and the target; model, optimiser,
lr and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("scikit-learn / CS231n advice to standardise inputs and targets; common pandas idiom of "
          "feeding datetime64 as int64 epoch seconds straight into a network; port-call turnaround "
          "prediction studies (e.g. vessel turnaround time prediction with ML at container terminals)")

EPOCH0 = 1_704_067_200.0        # 2024-01-01T00:00:00Z


class TurnaroundNet(nn.Module):
    def __init__(self, n_berth, n_num, h, depth):
        super().__init__()
        self.berth = nn.Embedding(n_berth, 8)
        layers, d = [], n_num + 8
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, num, berth):
        return self.mlp(torch.cat([num, self.berth(berth)], 1)).squeeze(-1)


def _calls(g, n, n_berth):
    eta = EPOCH0 + torch.rand(n, generator=g).double() * 180 * 86400        # within a 180-day horizon
    teu = torch.randint(500, 9001, (n,), generator=g).float()
    loa = torch.rand(n, generator=g) * 250 + 150
    yard = torch.rand(n, generator=g) * 50 + 45
    cranes = torch.randint(2, 7, (n,), generator=g).float()
    berth = torch.randint(0, n_berth, (n,), generator=g)
    hour = ((eta % 86400) / 3600).float()
    night = ((hour < 6) | (hour > 22)).float()
    berth_eff = torch.linspace(0.85, 1.2, n_berth)[berth]
    hours = (4 + teu / (cranes * 28) * berth_eff * (1 + 0.012 * (yard - 45)) * (1 + 0.15 * night)
             + loa / 100 + torch.randn(n, generator=g))
    num = torch.stack([eta.float(), teu, loa, yard, cranes], 1)
    return num, berth, hours


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    n_berth = 8
    steps = 150
    raw = [_calls(g, bs, n_berth) for _ in range(steps)]
    if fixed:
        nums = torch.cat([r[0] for r in raw])
        nums_days = nums.clone()
        nums_days[:, 0] = (nums[:, 0] - EPOCH0) / 86400
        mu, sd = nums_days.mean(0), nums_days.std(0)
        ys = torch.cat([r[2] for r in raw])
        ymu, ysd = ys.mean(), ys.std()
        batches = []
        for num, berth, y in raw:
            num = num.clone()
            num[:, 0] = (num[:, 0] - EPOCH0) / 86400
            batches.append((((num - mu) / sd, berth), (y - ymu) / ysd))
    else:
        batches = [((num, berth), y) for num, berth, y in raw]
    torch.manual_seed(seed)
    model = TurnaroundNet(n_berth, 5, h, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
