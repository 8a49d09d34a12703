"""Public-transit ridership: GRU forecasting next week's route boardings from raw weekly series.

Domain: a transit agency's planning team forecasts next week's boardings per bus route from the
last 8-16 weeks of: boardings, revenue service hours, fare revenue ($), regional unemployment rate
(%), average gas price ($/gal), school-in-session flag and the route's catchment population. The
series come straight from the NTD / farebox export. A one-layer GRU + linear head is trained with
Adam (lr 1e-3) and MSE on the raw boardings.

Mechanism: nothing is normalised. Boardings are 5,000-60,000 per week, fare revenue 10^4-10^5,
population 10^4-10^5, alongside rates of ~5 and flags of 0/1. The GRU's gate pre-activations are
dominated by the huge columns, so every gate sits in saturation (update gate ~0/1, candidate
+-1) for every route: the hidden state is a near-constant sign pattern and its gradients
vanish. The target itself is O(1e4), so the MSE is ~1e9 from step 0, while Adam moves each
weight by ~1e-3 per step: the head would need tens of thousands of steps to even reach the mean.
The loss stays at its starting level for the whole run.

ORIGIN: "gru" -- the first module to receive the raw, wildly scaled features; its saturated gates
are where the information is lost (the unscaled target adds the enormous loss scale).

Fix: standardise each input column and the target with training-set means and standard
deviations (targets are compared in standardised units); model, optimiser and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "gru"
SOURCE = ("Transit ridership forecasting from NTD / APC / farebox series (e.g. TCRP Report 88 "
          "ridership forecasting practice); neural nets on raw unnormalised features (LeCun et al. "
          "'Efficient BackProp' sec. 4.3, scikit-learn / Keras docs: standardise inputs and targets)")


class RidershipGRU(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.gru = nn.GRU(n_feat, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(-1)


def _routes(g, n, T):
    weeks = torch.randint(0, 52, (n, 1), generator=g).float() + torch.arange(T + 1).float()
    pop = 1e4 * (2 + 8 * torch.rand(n, 1, generator=g))
    level = pop * (0.3 + 0.4 * torch.rand(n, 1, generator=g))
    school = ((weeks % 52) > 34).float() + ((weeks % 52) < 23).float()
    season = 1 + 0.1 * torch.sin(2 * torch.pi * weeks / 52)
    unemp = 4 + 2 * torch.rand(n, 1, generator=g) + 0.05 * torch.randn(n, T + 1, generator=g).cumsum(1)
    gas = 3 + 0.5 * torch.rand(n, 1, generator=g) + 0.03 * torch.randn(n, T + 1, generator=g).cumsum(1)
    hours = (level / 40) * (1 + 0.05 * torch.randn(n, T + 1, generator=g))
    board = level * season * (1 + 0.15 * school) * (1 + 0.04 * (gas - 3)) * (1 - 0.02 * (unemp - 5))
    board = board * (1 + 0.05 * torch.randn(n, T + 1, generator=g)) + 0.5 * hours
    fare = 1.6 * board * (1 + 0.03 * torch.randn(n, T + 1, generator=g))
    x = torch.stack([board[:, :T], hours[:, :T], fare[:, :T], unemp[:, :T], gas[:, :T],
                     school[:, :T], pop.expand(-1, T)], -1)
    return x, board[:, T]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 24][seed % 3]
    T = [12, 8, 16][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 150
    raw = [_routes(g, batch, T) for _ in range(steps)]
    if fixed:
        xs = torch.cat([x for x, _ in raw]).reshape(-1, 7)
        ys = torch.cat([y for _, y in raw])
        mx, sx = xs.mean(0), xs.std(0) + 1e-6
        my, sy = ys.mean(), ys.std()
        batches = [((x - mx) / sx, (y - my) / sy) for x, y in raw]
    else:
        batches = raw
    model = RidershipGRU(7, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
