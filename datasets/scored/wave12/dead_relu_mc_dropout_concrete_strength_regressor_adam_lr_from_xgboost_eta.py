"""MC-dropout regressor (Gal & Ghahramani 2016) for concrete compressive strength from eight
min-max-scaled mix proportions (cement, slag, fly ash, water, superplasticiser, coarse/fine
aggregate, age; all in [0, 1]): an 8 -> 32 -> 8 -> 1 ReLU MLP with dropout 0.1 after each hidden
layer, zero-initialised output layer, standardised MSE target.  The Adam learning rate was copied
from the XGBoost baseline's config (learning_rate = 0.3, XGBoost's default eta).  Adam moves every
weight by up to ~lr per step whatever its gradient scale, i.e. by more than the weights' own
size; because the inputs are all >= 0, the oscillating updates leave the narrow 8-unit second
layer with negative pre-activations for every sample within the first few dozen steps (most of
the first layer goes with it).  After that no gradient reaches the hidden layers, only the output
bias learns, and the loss stays at the variance of the target (~1): a silent stall without NaN.
The same lr with LeakyReLU mostly trains, which is what points at the dead units.
Fixed: Adam lr 3e-3, nothing else changed."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.3"
SOURCE = ("Gal & Ghahramani 2016 'Dropout as a Bayesian Approximation' UCI regression setup (Concrete "
          "dataset, Yeh 1998); dying-ReLU reports when a GBDT learning rate (eta = 0.3) is reused "
          "as the Adam learning rate of an MLP on min-max-scaled features")


class MCDropoutRegressor(nn.Module):
    def __init__(self, n_feat=8, p=0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_feat, 32), nn.ReLU(), nn.Dropout(p),
            nn.Linear(32, 8), nn.ReLU(), nn.Dropout(p),
            nn.Linear(8, 1))
        nn.init.zeros_(self.net[6].weight)
        nn.init.zeros_(self.net[6].bias)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, bs, steps = 8, 64, 200
    w = torch.randn(n_feat, generator=g) / 2
    w2 = torch.randn(n_feat, generator=g) / 2

    def sample(n):
        x = torch.rand(n, n_feat, generator=g)               # min-max scaled, in [0, 1]
        xc = (x - 0.5) * 3
        y = torch.relu(xc @ w) + torch.sin(xc @ w2) + 0.5 * xc[:, 0] * xc[:, 1] \
            + 0.2 * torch.randn(n, generator=g)
        return x, y

    _, y_ref = sample(4096)
    y_mu, y_sd = y_ref.mean(), y_ref.std()
    batches = []
    for s in range(steps):
        x, y = sample(bs)
        batches.append((x, (y - y_mu) / y_sd))

    model = MCDropoutRegressor(n_feat)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else 0.3)
    mse = nn.MSELoss()

    def loss_fn(out, target):
        return mse(out, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
