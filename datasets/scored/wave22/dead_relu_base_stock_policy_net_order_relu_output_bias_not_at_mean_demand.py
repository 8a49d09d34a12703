"""Learned base-stock (order-up-to) replenishment policy trained end-to-end on newsvendor cost (in
the spirit of "deep newsvendor" / end-to-end inventory policy learning, Oroojlooyjadid et al.
2020): an MLP reads SKU/store/calendar features and outputs the order-up-to level S(x) (in units
of 100 pieces); the order is q = relu(S(x) - IP) for the current inventory position IP, and the
loss is the realised holding + backorder cost h * (IP + q - D)^+ + b * (D - IP - q)^+.

Mechanism: the policy head is a plain nn.Linear whose bias is left at its default (~0), although
the order-up-to level has to sit around the mean demand (1.0 in these units) while inventory
positions on hand are 0.5 .. 1.0. At step 0, S(x) ~ +/-0.3 < IP for every sample: the order ReLU
is inactive for the whole data set, q = 0 everywhere and its gradient is exactly 0, so no
gradient reaches the policy network at all. The cost is that of never ordering, and it stays
there for the whole run (a dead ReLU gate on the decision).

ORIGIN: "order_relu" -- the ReLU that forms the order quantity and is inactive for all inputs.

Fix (fixed=True): the policy head bias is initialised at the mean demand (S starts at ~1.0,
standard practice for a base-stock head), so the order ReLU is active on part of the data from
step 0. Same network, cost, optimiser, lr and data.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "order_relu"
SOURCE = ("end-to-end learned order-up-to / newsvendor policies with q = relu(S - IP): policy "
          "never orders, zero gradient (reported for deep inventory-policy reimplementations)")


class BaseStockPolicy(nn.Module):
    def __init__(self, n_feat, hidden, s_init):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 1)
        nn.init.constant_(self.head.bias, s_init)
        self.order_relu = nn.ReLU()

    def forward(self, x, ip):
        s = self.head(self.body(x)).squeeze(-1)           # order-up-to level, hundreds of units
        return ip + self.order_relu(s - ip)              # inventory after ordering


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_feat = [10, 14, 8][seed % 3]
    hidden = [32, 48, 24][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [1.5e-3, 1e-3, 2e-3][seed % 3]
    h_cost, b_cost = 1.0, [4.0, 3.0, 9.0][seed % 3]
    steps = 250
    w = rng.normal(size=n_feat) / np.sqrt(n_feat)

    def sample(b):
        x = rng.normal(size=(b, n_feat))
        mu = np.exp(0.35 * (x @ w))                                 # mean demand, hundreds
        d = mu * np.exp(0.25 * rng.normal(size=b) - 0.03)
        ip = rng.uniform(0.5, 1.0, size=b)                          # inventory position on hand
        return ((torch.tensor(x, dtype=torch.float32), torch.tensor(ip, dtype=torch.float32)),
                torch.tensor(d, dtype=torch.float32))

    batches = [sample(batch) for _ in range(steps)]
    model = BaseStockPolicy(n_feat, hidden, s_init=1.0 if fixed else 0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(level, demand):
        return (h_cost * torch.relu(level - demand) + b_cost * torch.relu(demand - level)).mean()

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
