"""saturation in a hypernetwork-generated tanh MLP (per-sensor gain estimation, Adam).

Mechanism: a hypernetwork conditions a small target MLP on the sensor that recorded the input.
A learned sensor embedding (``nn.Embedding``, entries ~ N(0, 1)) goes through a two-layer ReLU
MLP (``hyper``) whose output vector is cut into the weight matrices of a 3-5 layer, bias-free
target MLP; the target MLP is applied functionally, ``torch.tanh(F.linear(h, W))`` per layer,
and a shared, zero-initialised linear head reads its last hidden layer. The hypernetwork's own
layers are given He init (``kaiming_normal_``), which preserves variance *through the
hypernetwork*: the generated entries then have the embedding's scale, a std of about 1.4 (0.9-2
depending on the sensor), whatever the fan-in of the target layer they become. A target layer
should have a std of about 1/sqrt(fan_in), 0.09-0.125 here, so every generated layer is 10-15x
too large (the mismatch Chang et al. 2020 call the hypernetwork initialisation problem). The
inputs are positive intensity traces (a sensor's one to three fixed patterns on a baseline of 1,
plus noise), all multiplied by a gain exp(0.5 y), and the target is the log-gain y. The first
target layer sums 64-128 inputs and its pre-activations spread over about +-15-20 times the
gain; every later layer sums 64-96 near-+-1 inputs. 70-95% of the tanh units sit at
|tanh| > 0.99 from step 0 and stay there, tanh'(a) ~ 0, and almost no gradient reaches the
hypernetwork through them. A saturated unit passes only the sign of its pre-activation, which
the gain does not change, so the head sees almost no trace of y and the MSE loss stays at about
var(y) for the whole run: a plateau, not a divergence (Adam moves the hypernetwork, but the
generated scale stays an order of magnitude too large and the units stay pinned).

ORIGIN: ``hyper``, the hypernetwork that emits the oversized weights. The saturating op is a
functional ``torch.tanh`` in the model's forward, not a module; the first module whose output
is wrong is the generator of the target weights (its last Linear, ``hyper.2``, is one hop
inside it).
Fixed: the same hypernetwork, init, data and optimizer, with each generated weight matrix
multiplied by 1/sqrt(2 * fan_in) of its target layer (the "hyperfan-in" correction, the scale a
He-initialised target layer would have): pre-activations return to about unit scale, the tanh
units work in their graded range and the loss falls to 10-25% of var(y).
"""

from __future__ import annotations

import math
import random

import torch
import torch.nn.functional as F
from torch import nn

CAUSE = "saturation"
ORIGIN = "hyper"
SOURCE = (
    "Chang, Flokas & Lipson 2020, 'Principled Weight Initialization for Hypernetworks' (ICLR): "
    "classical inits on the hypernetwork give target-network weights of the wrong scale and "
    "saturated/exploding target activations, fixed by hyperfan-in scaling; Ha, Dai & Le 2016, "
    "'HyperNetworks'; LeCun et al. 1998 (Efficient BackProp) on keeping tanh units linear."
)


class HyperMLP(nn.Module):
    """Sensor embedding -> hypernetwork -> weights of a tanh MLP -> shared linear head."""

    def __init__(
        self, sensors: int, z_dim: int, hidden: int, d_in: int, width: int, depth: int, fix: bool
    ) -> None:
        super().__init__()
        self.shapes = [(width, d_in if i == 0 else width) for i in range(depth)]
        n_params = sum(o * i for o, i in self.shapes)  # weights only, bias-free target layers
        self.fix = fix
        self.embed = nn.Embedding(sensors, z_dim)
        self.hyper = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_params))
        for layer in (self.hyper[0], self.hyper[2]):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)
        self.head = nn.Linear(width, 1)
        nn.init.zeros_(self.head.weight)  # shared head starts at zero: the run starts at var(y)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor, sensor: torch.Tensor) -> torch.Tensor:
        theta = self.hyper(self.embed(sensor)).squeeze(0)
        h, at = x, 0
        for out_f, in_f in self.shapes:
            w = theta[at : at + out_f * in_f].view(out_f, in_f)
            at += out_f * in_f
            if self.fix:
                w = w / math.sqrt(2.0 * in_f)  # hyperfan-in: target-layer scale
            h = torch.tanh(F.linear(h, w))
        return self.head(h)


def _data(seed: int, steps: int, batch: int, sensors: int, d_in: int, kinds: int) -> list:
    """One sensor per batch (episodic). Each sensor records one of ``kinds`` smooth patterns of
    its own plus noise; the whole waveform is scaled by the gain exp(0.5 y), y ~ N(0, 1)."""
    g = torch.Generator().manual_seed(310_000 + seed)
    pats = torch.randn(sensors, kinds, 1, d_in, generator=g)
    pats = F.avg_pool1d(pats.view(-1, 1, d_in), 3, stride=1, padding=1).view(sensors, kinds, d_in)
    pats = 1.0 + 0.5 * pats / pats.std(dim=-1, keepdim=True)  # intensities: positive traces
    batches = []
    for _ in range(steps):
        s = int(torch.randint(0, sensors, (1,), generator=g))
        k = torch.randint(0, kinds, (batch,), generator=g)
        y = torch.randn(batch, 1, generator=g)
        x = pats[s, k] + 0.3 * torch.randn(batch, d_in, generator=g)
        batches.append(((x * torch.exp(0.5 * y), torch.tensor([s])), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([3, 4, 5])
    width = rng.choice([64, 96])
    d_in = rng.choice([64, 96, 128])
    z_dim = rng.choice([8, 12, 16])
    hidden = rng.choice([32, 64])
    sensors = rng.choice([2, 3, 4])
    kinds = rng.choice([1, 2, 3])
    batch = rng.choice([64, 96, 128])
    steps = rng.choice([150, 180, 200])
    lr = rng.choice([3e-4, 5e-4])

    torch.manual_seed(seed)
    model = HyperMLP(sensors, z_dim, hidden, d_in, width, depth, fix=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, sensors, d_in, kinds),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
