"""Deep hedging (Buehler, Gonon, Teichmann & Wood 2019) of a short European call under Black-
Scholes dynamics: a delta network shared across rebalancing dates maps (time to maturity,
normalised log-moneyness) to the hedge ratio; the terminal hedging error payoff - premium -
sum_t delta_t (S_{t+1} - S_t) is minimised in mean square (premium fixed at the Black-Scholes
price, as in quadratic-hedging set-ups).

Mechanism: the network was ported from TF1 code whose dense layers use
tf.random_normal_initializer(stddev=0.01). With 4-6 ReLU layers of width 32-64 each layer
multiplies the activation scale by ~0.01 * sqrt(width / 2) ~ 0.05, so the pre-sigmoid output is
~1e-6 .. 1e-8 for every input from step 0 (delta = sigmoid(0) = 0.5 everywhere) and the
backpropagated gradients shrink the same way towards the lower layers. SGD cannot move the
network off the "constant half-delta" hedge: the loss sits at the hedging error of a static 0.5
position, far above what a state-dependent delta achieves.

ORIGIN: "delta_net.0" -- the first Linear of the delta network; the geometric shrinkage starts
there and repeats through every layer.

Fix (fixed=True): Kaiming (He) normal init for the ReLU layers, zero biases. Same depth, width,
optimiser, lr and paths.
"""
import math
import numpy as np
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "delta_net.0"
SOURCE = ("deep hedging ports from TF1 code with random_normal(stddev=0.01) dense initialisers; "
          "hedge ratios stay ~0, loss = unhedged payoff variance")


class DeepHedger(nn.Module):
    def __init__(self, width, depth, n_steps, maturity, sigma, kaiming):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers += [nn.Linear(d, 1)]
        self.delta_net = nn.Sequential(*layers)
        for m in self.delta_net:
            if isinstance(m, nn.Linear):
                if kaiming:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, std=0.01)
                nn.init.zeros_(m.bias)
        self.n_steps, self.maturity, self.sigma = n_steps, maturity, sigma

    def forward(self, paths):                      # paths: (B, n_steps + 1), S_0 = 100, K = 100
        b = paths.shape[0]
        tau = self.maturity * (1 - torch.arange(self.n_steps, dtype=paths.dtype) / self.n_steps)
        tau = tau[None, :].expand(b, -1)
        m = torch.log(paths[:, :-1] / 100.0) / (self.sigma * torch.sqrt(tau))
        feats = torch.stack([tau / self.maturity, m], dim=-1)
        delta = torch.sigmoid(self.delta_net(feats).squeeze(-1))   # call delta in (0, 1)
        return (delta * (paths[:, 1:] - paths[:, :-1])).sum(dim=1)   # hedge gains


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    depth = [4, 5, 6][seed % 3]
    width = [32, 48, 40][seed % 3]
    batch = [256, 192, 256][seed % 3]
    lr = [2e-3, 1.5e-3, 1e-3][seed % 3]
    n_steps = [20, 16, 24][seed % 3]
    steps = 150
    sigma, T, S0, K = 0.2, 0.25, 100.0, 100.0
    d1 = (math.log(S0 / K) + 0.5 * sigma ** 2 * T) / (sigma * math.sqrt(T))
    ncdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    premium = S0 * ncdf(d1) - K * ncdf(d1 - sigma * math.sqrt(T))
    dt = T / n_steps

    def sample(b):
        z = rng.normal(size=(b, n_steps))
        logs = np.cumsum(-0.5 * sigma ** 2 * dt + sigma * math.sqrt(dt) * z, axis=1)
        paths = S0 * np.exp(np.concatenate([np.zeros((b, 1)), logs], axis=1))
        payoff = np.maximum(paths[:, -1] - K, 0.0) - premium
        return torch.tensor(paths, dtype=torch.float32), torch.tensor(payoff, dtype=torch.float32)

    batches = [sample(batch) for _ in range(steps)]
    model = DeepHedger(width, depth, n_steps, T, sigma, kaiming=fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()                 # (hedge gains - (payoff - premium))^2
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
