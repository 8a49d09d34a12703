"""Residual MLP regressor for house prices fed the raw columns: living area in sqft (~500-4000), lot
size in sqft (~1e3-2e4), year built (~1900-2020), bedrooms, distance to centre in metres, and the
target is the sale price in dollars (~1e5-1e6).  The first Linear receives inputs of thousands, the
MSE starts at ~1e11 and its gradients with respect to the stem weights are astronomically large; the
first SGD (momentum) step throws the weights to enormous values, the next forward pass overflows and the loss becomes
inf/NaN within a few steps.  Fixed: inputs and targets standardised with dataset statistics."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "stem"
SOURCE = "Kaggle House Prices / Ames housing with raw features and dollar targets into an MLP (loss ~1e10 that never moves)"


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class ResMLP(nn.Module):
    def __init__(self, n_in, d, depth):
        super().__init__()
        self.stem = nn.Linear(n_in, d)
        self.blocks = nn.Sequential(*[ResBlock(d) for _ in range(depth)])
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.blocks(F.relu(self.stem(x)))).squeeze(-1)


def make(g, n):
    area = 500 + 3500 * torch.rand(n, generator=g)
    lot = 1000 + 19000 * torch.rand(n, generator=g)
    year = 1900 + 120 * torch.rand(n, generator=g)
    beds = torch.randint(1, 6, (n,), generator=g).float()
    dist = 20000 * torch.rand(n, generator=g)
    price = 40000 + 150 * area + 4 * lot + 800 * (year - 1900) + 8000 * beds - 6 * dist
    price = price * (1 + 0.05 * torch.randn(n, generator=g))
    return torch.stack([area, lot, year, beds, dist], 1), price


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, depth, bs, steps = [(32, 2, 64, 150), (48, 1, 32, 200), (24, 3, 128, 120)][seed % 3]
    model = ResMLP(5, d, depth)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs, ys = make(g, bs * steps)
    if fixed:
        xs = (xs - xs.mean(0)) / xs.std(0)
        ys = (ys - ys.mean()) / ys.std()
    batches = [(xs[i * bs:(i + 1) * bs], ys[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.mse_loss(o, y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
