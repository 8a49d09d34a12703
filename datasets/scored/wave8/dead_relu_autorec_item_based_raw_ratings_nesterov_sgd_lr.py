"""Item-based AutoRec (Sedhain et al. 2015) with the sigmoid encoder swapped for ReLU: each item's
vector of user ratings (1..5, 0 = unobserved) is encoded by a ReLU layer and decoded back, the
loss being MSE on observed entries only (the output bias starts at the global mean rating).  The
inputs are non-negative and dense-ish, so the first Nesterov-SGD steps at a learning rate copied
from a sigmoid AutoRec recipe move the whole hidden layer coherently: the bias and the weights on
every rated user get the same-signed large update, every pre-activation goes negative for every
item, and the encoder is dead after a handful of steps.  The decoder then only sees zeros, the
prediction collapses to the per-user output bias and the masked MSE sits near its starting value
for the rest of the run (all values finite).  The fix lowers the learning rate so the ReLUs
survive."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "encoder.0"
SOURCE = ("Sedhain et al. 'AutoRec: Autoencoders Meet Collaborative Filtering' (WWW 2015) re-implemented "
          "with ReLU; dying-ReLU reports after large early SGD steps on non-negative inputs")

N_USERS, HID, RANK = 150, 48, 3


class IAutoRec(nn.Module):
    def __init__(self, mean_rating):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_USERS, HID), nn.ReLU())
        self.decoder = nn.Linear(HID, N_USERS)
        nn.init.constant_(self.decoder.bias, mean_rating)

    def forward(self, r):
        return self.decoder(self.encoder(r))


def masked_mse(pred, target):
    r, mask = target
    return ((pred - r) ** 2 * mask).sum() / mask.sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_items = 400
    U = torch.randn(N_USERS, RANK, generator=g)
    V = torch.randn(n_items, RANK, generator=g)
    full = (3.4 + 0.9 * V @ U.T + 0.3 * torch.randn(n_items, N_USERS, generator=g)).round().clamp(1, 5)
    mask = (torch.rand(n_items, N_USERS, generator=g) < 0.3).float()
    ratings = full * mask
    mean_rating = float(ratings.sum() / mask.sum())

    steps, bs = 150, 32
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_items, (bs,), generator=g)
        batches.append((ratings[idx], (ratings[idx], mask[idx])))
    model = IAutoRec(mean_rating)
    lr = 0.05 if fixed else 1.0
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=masked_mse, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
