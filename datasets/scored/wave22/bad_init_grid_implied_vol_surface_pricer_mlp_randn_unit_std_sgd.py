"""Grid-based deep pricer for model calibration (Horvath, Muguruza & Tomas 2021, "Deep learning
volatility"): an MLP maps model parameters to the whole implied-volatility surface on a fixed
(maturity x strike) grid, so calibration becomes a fast deterministic optimisation. Here the
parameters are those of a time-dependent SVI-type surface and the grid is 6 x 8 (or similar).

Mechanism: the layers are built by hand (nn.Parameter(torch.randn(fan_in, fan_out))), so every
weight has standard deviation 1 instead of ~1/sqrt(fan_in). With ELU hidden units each layer
multiplies the activation scale by roughly sqrt(fan_in / 2) (~4-6x): after 4-6 hidden layers the
predicted vols are 1e3-1e5 while the targets are ~0.1-0.6. The MSE at step 0 is ~1e7+, the first
SGD+momentum steps produce equally enormous updates, and the loss overflows to inf/NaN within a
few steps.

ORIGIN: "layers.0" -- the first hand-initialised layer; the scale blow-up starts there and
compounds through every later layer.

Fix (fixed=True): the same hand-written layers initialised with Xavier/Glorot normal (std =
sqrt(2 / (fan_in + fan_out))), zero biases. Same depth, width, optimiser, lr, data.
"""
import math
import numpy as np
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("'Deep learning volatility' grid pricer re-implementations with hand-written "
          "torch.randn weights (no fan-in scaling): loss inf/nan in the first iterations")


class DenseLayer(nn.Module):
    def __init__(self, fan_in, fan_out, xavier):
        super().__init__()
        std = math.sqrt(2.0 / (fan_in + fan_out)) if xavier else 1.0
        self.weight = nn.Parameter(torch.randn(fan_in, fan_out) * std)
        self.bias = nn.Parameter(torch.zeros(fan_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class GridPricer(nn.Module):
    def __init__(self, n_par, width, depth, n_out, xavier):
        super().__init__()
        dims = [n_par] + [width] * depth
        self.layers = nn.ModuleList([DenseLayer(dims[i], dims[i + 1], xavier) for i in range(depth)])
        self.act = nn.ELU()
        self.out = DenseLayer(width, n_out, xavier)

    def forward(self, p):
        h = p
        for layer in self.layers:
            h = self.act(layer(h))
        return self.out(h)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    depth = [4, 5, 6][seed % 3]
    width = [48, 32, 40][seed % 3]
    batch = [64, 96, 48][seed % 3]
    lr = [1e-2, 5e-3, 8e-3][seed % 3]
    steps = 150
    mats = np.array([0.1, 0.25, 0.5, 1.0, 1.5, 2.0])
    ks = np.linspace(-0.4, 0.3, 8)                           # log-moneyness grid
    T, K = np.meshgrid(mats, ks, indexing="ij")

    def sample(b):
        # (atm level, term slope, skew, smile, curvature decay)
        lo = np.array([0.15, -0.05, -0.6, 0.1, 0.2])
        hi = np.array([0.45, 0.05, -0.1, 0.5, 1.0])
        u = rng.uniform(size=(b, 5))
        par = lo + (hi - lo) * u
        atm = par[:, 0, None, None] + par[:, 1, None, None] * np.sqrt(T)[None]
        skew = par[:, 2, None, None] / (1 + par[:, 4, None, None] * T[None])
        smile = par[:, 3, None, None] / np.sqrt(1 + T[None])
        iv = np.sqrt(np.maximum(atm ** 2 + atm * skew * K[None] + smile * K[None] ** 2, 1e-4))
        x = (u - 0.5) * np.sqrt(12.0)                          # parameters standardised
        return (torch.tensor(x, dtype=torch.float32),
                torch.tensor(iv.reshape(b, -1), dtype=torch.float32))

    batches = [sample(batch) for _ in range(steps)]
    model = GridPricer(5, width, depth, mats.size * ks.size, xavier=fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
