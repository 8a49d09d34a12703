"""A perceptual-loudness surrogate maps 24 critical-band levels of a sound to its loudness in sones
(z-scored). Loudness must never decrease when any band gets louder, so the model is a monotone MLP:
every weight is made non-negative with softplus(raw_weight) (averaged over the fan-in), biases start
at zero, and the activations are ReLU. The band levels are fed as dBFS / 60, which are all <= 0
(digital full scale is the top of the range; programme material sits at -20 ... -80 dBFS). With
positive weights and non-positive inputs, every first-layer pre-activation is
mean_k softplus(w_jk) x_k ~ 0.7 * (-0.8) < 0 for every sound, so every ReLU unit of mono1 is off for
the whole data set from step 0; mono2 then receives zeros and sits exactly at its kink, and the only
parameter with a gradient is the output bias. Adam fits that bias and nothing else: the loss stays
at the target variance for the whole run. The fix swaps the ReLUs for LeakyReLU(0.1) (still
monotone, so the constraint is kept), which lets gradient through the negative side so the biases
can pull the units into their active range; data, weights, optimiser and lr are unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as Fn

CAUSE = "dead_relu"
ORIGIN = "mono1"
SOURCE = ("Monotone networks with positive weights (Sill 1998; Daniels & Velikova 2010; 'Monotonic "
          "networks' / MonoNet discussions): with non-negative weights all-negative inputs (log/dB "
          "features) switch every ReLU off; Zwicker/Moore-Glasberg loudness surrogates.")

NB = 24
LR = 3e-2


class MonoLinear(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.raw = nn.Parameter(torch.empty(cout, cin).uniform_(-0.5, 0.5))
        self.bias = nn.Parameter(torch.zeros(cout))
        self.cin = cin

    def forward(self, x):
        # positive weights, averaged over the inputs so the scale does not grow with fan-in
        return x @ Fn.softplus(self.raw).T / self.cin + self.bias


class MonoBlock(nn.Module):
    def __init__(self, cin, cout, leaky):
        super().__init__()
        self.lin = MonoLinear(cin, cout)
        self.act = nn.LeakyReLU(0.1) if leaky else nn.ReLU()

    def forward(self, x):
        return self.act(self.lin(x))


class MonotoneLoudness(nn.Module):
    def __init__(self, leaky):
        super().__init__()
        self.mono1 = MonoBlock(NB, 32, leaky)
        self.mono2 = MonoBlock(32, 16, leaky)
        self.out = MonoLinear(16, 1)

    def forward(self, levels):
        return self.out(self.mono2(self.mono1(levels))).squeeze(-1)


def _sounds(g, n):
    overall = -20 - 50 * torch.rand(n, 1, generator=g)                   # dBFS
    shape = torch.cumsum(torch.randn(n, NB, generator=g) * 3, 1)
    shape = shape - shape.mean(1, keepdim=True)
    levels = torch.clamp(overall + shape, max=0.0)
    # Zwicker-like: specific loudness ~ (intensity)^0.23 per band, total = sum
    spl = levels + 100.0                                                  # playback calibration
    specific = torch.clamp(10 ** (0.023 * (spl - 30.0)) - 1.0, min=0.0)
    sones = specific.sum(1)
    return levels / 60.0, sones


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3700 + seed)
    x, y = _sounds(g, 30 * 64)
    y = (y - y.mean()) / y.std()
    model = MonotoneLoudness(leaky=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    steps = 150
    pool = [(x[i * 64:(i + 1) * 64], y[i * 64:(i + 1) * 64]) for i in range(30)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(pred, t):
        return ((pred - t) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
