"""Habitat-type classifier on soundscape acoustic indices (min-max scaled, all >= 0), ReLU MLP
trained with Adam at the SGD baseline's lr (0.2-0.3): the hidden ReLUs die in the first steps.

Mechanism: an ecoacoustics study summarises each recording with 64 acoustic indices (ACI,
ADI, AEI, BI, H, NDSI and per-1-kHz-band energies/ACI) and min-max scales them to [0, 1] --
so every input is non-negative and uncentred.  The team swaps the optimiser of its plain-SGD
baseline for Adam but keeps the baseline's lr (0.2-0.3).  For a hidden unit j the first-layer
weight gradients delta_j * x_k all share the sign of delta_j because every x_k >= 0, and
Adam's first steps are ~lr*sign(g) per weight: each unit's pre-activation moves by about
lr * sum_k x_k (~0.2*30) in one direction on every input at once.  Units pushed down go
negative for all recordings, receive zero gradient and never return; within a few steps
(almost) all hidden units of the first layer are dead, the output is a constant and the NLL
sits at log(K) while the fixed run reaches a small fraction of it.

ORIGIN: ``net.1`` -- the first ReLU, where the units go silent for every input and gradient
flow to the rest of the network stops.

Fix: Adam's usual lr (1e-3); architecture, data, batches and steps are the same.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("Soundscape ecology habitat / land-use classification from acoustic indices (Sueur et al. "
          "2014; scikit-maad indices) with MinMaxScaler features; dying-ReLU reports on non-negative "
          "inputs with a large Adam lr ('all ReLU outputs zero after first epoch', PyTorch forums, "
          "cs231n notes on dead ReLUs).")


class IndexMLP(nn.Module):
    def __init__(self, n_idx, hidden, depth, n_cls):
        super().__init__()
        layers, d = [], n_idx
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        layers += [nn.Linear(d, n_cls), nn.LogSoftmax(dim=-1)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(55 + seed)
    torch.manual_seed(seed)
    n_idx, n_cls = 64, 5
    hidden = [128, 96, 160][seed % 3]
    depth = [2, 3, 2][seed % 3]
    batch = [64, 48, 96][seed % 3]
    lr_bad = [0.2, 0.25, 0.3][seed % 3]
    steps = 150
    lr = 1e-3 if fixed else lr_bad

    n = steps * batch
    y = torch.randint(0, n_cls, (n,), generator=g)
    proto = torch.randn(n_cls, n_idx, generator=g)
    mix = torch.randn(n_idx, n_idx, generator=g) / n_idx ** 0.5
    raw = (proto[y] + 0.9 * torch.randn(n, n_idx, generator=g)) @ (torch.eye(n_idx) + mix)
    raw = torch.sigmoid(raw)  # indices are bounded ratios / entropies
    lo, hi = raw.min(0).values, raw.max(0).values
    x = (raw - lo) / (hi - lo)  # MinMaxScaler

    model = IndexMLP(n_idx, hidden, depth, n_cls)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.NLLLoss(), "batches": batches,
            "steps": steps}
