"""Probabilistic demand forecaster with a binned categorical output (the 'quantise the scaled target
into bins and train with cross-entropy' head used by Chronos-style tokenised forecasters and by
binned DeepAR variants): 48 mean-scaled demand lags pass through a 128-128-64 ReLU MLP that emits
logits over 16 value bins for the next step. The optimiser is SGD with momentum 0.9 at lr=2.0, a
value taken over from a large-batch recipe. The momentum-amplified early steps push the last (64-unit)
hidden layer's pre-activations below zero for every input window (most of the layer before it dies
too): that whole layer outputs exact zeros, no gradient reaches the layers below, the logits freeze at the bin prior learned by the last
bias, and the cross-entropy settles at (and above) its starting value. Nothing goes non-finite. The
fix is the lower learning rate 0.1, everything else unchanged."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "mlp.5"
SOURCE = "Binned/tokenised categorical forecast heads (Chronos, Ansari et al. 2024); classic dying-ReLU reports with SGD momentum and a recipe lr"

CTX, N_BINS, STEPS, BATCH = 48, 16, 200, 128


class BinnedForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(CTX, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                                 nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, N_BINS))

    def forward(self, lags):
        return self.mlp(lags)


def _windows(g, n):
    t = torch.randint(0, 2000, (n, 1), generator=g).float() + torch.arange(CTX + 1).float()
    level = 5 + 3 * torch.rand(n, 1, generator=g)
    s = level * (1 + 0.4 * torch.sin(2 * math.pi * t / 7) + 0.2 * torch.sin(2 * math.pi * t / 30))
    s = torch.poisson(s.clamp_min(0.1), generator=g)
    scale = s[:, :CTX].mean(1, keepdim=True).clamp_min(1.0)
    x = s[:, :CTX] / scale - 1.0
    yv = s[:, CTX] / scale.squeeze(1)
    edges = torch.linspace(0.0, 2.0, N_BINS - 1)
    return x, torch.bucketize(yv.contiguous(), edges)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    model = BinnedForecaster()
    lr = 0.1 if fixed else 2.0
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    x, y = _windows(g, 50 * BATCH)
    batches = []
    for i in range(STEPS):
        j = i % 50
        batches.append((x[j * BATCH:(j + 1) * BATCH], y[j * BATCH:(j + 1) * BATCH]))

    def loss_fn(logits, target):
        return F.cross_entropy(logits, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
