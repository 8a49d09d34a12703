"""Precinct-level turnout forecaster for election administration (polling-place staffing): a
GRU reads each precinct's turnout rates in the previous 6 elections (plus standardised
registration growth and share of mail ballots) and predicts next-election turnout rate
(ballots cast / registered voters); Huber loss, RMSprop.

Mechanism (data_outlier). After a redistricting, a handful of newly created precincts appear in
the county file with ballots cast recorded but 0 registered voters (registrations had not yet
been re-assigned). The rate column is computed as ballots / registered upstream, so those rows
carry +inf (or NaN for 0/0) targets. They all sit in the batch of the one county that
re-precincted, which is reached at a seed-dependent step. Before that step training is
ordinary; at that step the Huber loss of the batch is inf (the residual is infinite) and the
run's loss is non-finite. The model itself is fine: nothing in it is inf before that step.

ORIGIN = None: the corrupt values are targets, so they enter at the loss and hit no module
first; no single layer is where the failure starts.

Fix: the data-QA filter used for turnout files: drop rows whose registered-voter count is 0
(non-finite rate) from that batch before it is used. Same model, optimiser and other batches.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Turnout = ballots / registered computed for precincts with zero registered voters "
          "after redistricting (MIT Election Data and Science Lab precinct-return cleaning notes); "
          "'loss is inf' from a division-by-zero target in one batch (PyTorch forums)")


class TurnoutGRU(nn.Module):
    def __init__(self, d_in, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return torch.sigmoid(self.head(h[:, -1])).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 96, 128][seed % 3]
    bad_step = [44, 91, 67][seed % 3]
    steps = 140
    T = 6

    model = TurnoutGRU(3, hidden, layers)

    def sample(n):
        base = torch.rand(n, 1, generator=g) * 0.5 + 0.3            # precinct propensity
        cycle = torch.tensor([0.0, -0.12, 0.0, -0.12, 0.0, -0.12])   # midterm dips
        hist = (base + cycle + 0.03 * torch.randn(n, T, generator=g)).clamp(0.05, 0.98)
        growth = torch.randn(n, T, generator=g)
        mail = torch.randn(n, T, generator=g)
        x = torch.stack([hist, growth, mail], 2)
        y = (base[:, 0] + 0.02 * growth[:, -1] + 0.02 * torch.randn(n, generator=g)).clamp(0.05, 0.98)
        return x, y

    batches = [sample(bs) for _ in range(steps)]
    x, y = batches[bad_step]
    ballots = (y * 1500).round()
    registered = torch.full_like(y, 1500.0)
    registered[: 3 + seed % 4] = 0.0                 # new precincts, registrations not assigned
    rate = ballots / registered
    if fixed:
        keep = registered > 0
        x, rate = x[keep], rate[keep]
    batches[bad_step] = (x, rate)

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=0.1), batches=batches,
                steps=steps)
