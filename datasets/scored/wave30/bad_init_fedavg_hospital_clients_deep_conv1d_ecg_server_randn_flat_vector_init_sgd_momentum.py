"""Federated averaging of a deep 1-D CNN beat classifier across hospitals, simulated as one model
that sees each hospital's batches in turn (round-robin, a few local steps per client).

Mechanism: the simulation keeps the global model as one flat parameter vector (as many
hand-written FedAvg simulators do, so that averaging is a vector mean).  Round 0's vector is drawn
with ``torch.randn(num_params)`` and written into the network with ``vector_to_parameters``, which
silently replaces PyTorch's fan-in-scaled conv initialisation with unit-variance weights.  Each
Conv1d then multiplies the activation scale by about sqrt(kernel * channels / 2) (~9-11 here), so the
plain conv stack (no normalisation) amplifies the signal geometrically with depth: the logits are
~1e4-1e6 at step 0, the cross-entropy gradients are of the same order and the first SGD-momentum
updates push the weights to inf/NaN within a few steps.

ORIGIN = "features.0": the first Conv1d is where the growth starts (its unit-variance weights
already multiply the input scale by ~3 and every following conv compounds it); no later layer is
the root, they only repeat the same factor.

Fix: initialise the round-0 global vector from the network's own Kaiming (fan-in, ReLU)
initialisation (``parameters_to_vector`` of a freshly initialised model) instead of ``randn``.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Hand-written FedAvg simulators that hold the global model as a flat vector and seed it "
          "with torch.randn (pattern seen in federated-learning tutorials/issues where the server "
          "'initialises random weights' itself); the depth-wise explosion of unit-variance init "
          "is the classic case analysed by He et al. 2015 (Delving deep into rectifiers).")


class BeatCNN(nn.Module):
    def __init__(self, depth, width, n_classes):
        super().__init__()
        layers = []
        c = 1
        for _ in range(depth):
            layers += [nn.Conv1d(c, width, 5, padding=2), nn.ReLU()]
            c = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        h = self.features(x)
        return self.head(h.mean(-1))


def _beats(g, n, n_classes, length, gain, noise):
    # five beat morphologies at a random position: narrow QRS, wide QRS, inverted T wave,
    # notched (double) QRS, flutter (high-frequency waves instead of a clean baseline)
    t = torch.linspace(0, 1, length)[None]
    y = torch.randint(0, n_classes, (n,), generator=g)
    c = 0.25 + 0.5 * torch.rand(n, 1, generator=g)
    yy = y[:, None]
    w = torch.where(yy == 1, torch.full_like(c, 0.035), torch.full_like(c, 0.012))
    qrs = torch.exp(-((t - c) ** 2) / (2 * w ** 2))
    notch = torch.exp(-((t - c - 0.04) ** 2) / (2 * 0.012 ** 2))
    qrs = qrs + (yy == 3).float() * notch
    tsign = torch.where(yy == 2, -torch.ones_like(c), torch.ones_like(c))
    twave = 0.35 * tsign * torch.exp(-((t - c - 0.15) ** 2) / (2 * 0.04 ** 2))
    flutter = (yy == 4).float() * 0.3 * torch.sin(2 * math.pi * 18 * t + 6.28 * c)
    wander = 0.15 * torch.sin(2 * math.pi * t * (0.5 + torch.rand(n, 1, generator=g)))
    x = gain * (qrs + twave + flutter + wander) + noise * torch.randn(n, length, generator=g)
    return x[:, None, :], y


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    depth = pick(1, [4, 5, 6])
    width = pick(2, [32, 48, 40])
    lr = pick(3, [0.025, 0.02, 0.03])
    batch = pick(4, [16, 24, 32])
    n_clients = pick(5, [3, 4, 5])
    local_steps = 4
    steps = 120
    n_classes = 5
    length = 128

    model = BeatCNN(depth, width, n_classes)
    n_params = sum(p.numel() for p in model.parameters())
    randn_vec = torch.randn(n_params, generator=g)  # the simulator's round-0 global vector
    if fixed:
        for m in model.modules():
            if isinstance(m, nn.Conv1d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        global_vec = parameters_to_vector(model.parameters()).detach().clone()
    else:
        global_vec = randn_vec
    vector_to_parameters(global_vec, model.parameters())

    clients = []
    for k in range(n_clients):
        gain = 0.6 + 0.8 * k / max(1, n_clients - 1)
        clients.append((gain, 0.05 + 0.05 * k))
    batches = []
    for s in range(steps):
        k = (s // local_steps) % n_clients
        gain, noise = clients[k]
        x, y = _beats(g, batch, n_classes, length, gain, noise)
        batches.append((x, y))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": optimizer,
        "loss_fn": lambda out, y: F.cross_entropy(out, y),
        "batches": batches,
        "steps": steps,
    }
