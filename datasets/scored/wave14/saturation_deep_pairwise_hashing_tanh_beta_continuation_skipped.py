"""Deep supervised pairwise hashing net whose tanh(beta * z) code layer starts saturated.

Mechanism: HashNet/DPSH-style metric learning: a ReLU MLP on pre-extracted image features
produces K-bit relaxed codes b = tanh(beta * z); the pairwise likelihood loss is
mean[log(1 + exp(theta_ij)) - s_ij * theta_ij] with theta_ij = 0.5 * b_i . b_j and
s_ij = 1 for same-class pairs.  HashNet relies on a *continuation*: beta starts at 1 and is
raised slowly so that the codes become binary only at the end.  The user skipped the
schedule and used the final beta (40-80) from step 0, with SGD + momentum.  With |z| ~ 0.5
almost every pre-activation of the code layer is at |beta z| >> 9, where float32 tanh
rounds to exactly +-1 and its derivative 1 - tanh^2 is exactly 0; the few entries near
z = 0 get a beta-times amplified gradient, overshoot on the next step and saturate too.
Within a few steps no gradient reaches the code layer or the MLP, the codes are frozen
hard signs and the pairwise loss stays at (or above) its initial value.

ORIGIN is ``code_act``: the scaled tanh that saturates.

Fix: start the continuation at beta = 1 (small pre-activations), as in HashNet.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "code_act"
SOURCE = ("Cao et al. 2017 'HashNet: Deep Learning to Hash by Continuation' (tanh(beta z), "
          "beta raised from 1); Li et al. 2016 DPSH pairwise likelihood loss")


class ScaledTanh(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, z):
        return torch.tanh(self.beta * z)


class HashNet(nn.Module):
    def __init__(self, d_in, hidden, bits, beta):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.act2 = nn.ReLU()
        self.code = nn.Linear(hidden, bits)
        self.code_act = ScaledTanh(beta)

    def forward(self, x):
        return self.code_act(self.code(self.act2(self.fc2(self.act1(self.fc1(x))))))


def pairwise_hash_loss(b, y):
    theta = 0.5 * b @ b.t()
    s = (y.unsqueeze(0) == y.unsqueeze(1)).float()
    mask = ~torch.eye(len(y), dtype=torch.bool)
    return (F.softplus(theta) - s * theta)[mask].mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=128, bits=32, beta=60.0, bs=64, lr=0.2, steps=120),
           dict(hidden=96, bits=48, beta=40.0, bs=48, lr=0.15, steps=100),
           dict(hidden=192, bits=24, beta=80.0, bs=96, lr=0.2, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(555 + seed)
    d_in, n_classes = 128, 10
    centers = torch.randn(n_classes, d_in, generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_classes, (cfg["bs"],), generator=g)
        x = F.relu(centers[y] + 0.8 * torch.randn(cfg["bs"], d_in, generator=g))
        batches.append((x, y))
    model = HashNet(d_in, cfg["hidden"], cfg["bits"], beta=1.0 if fixed else cfg["beta"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=pairwise_hash_loss, batches=batches,
                steps=cfg["steps"])
