"""Hand-gesture classifier on surface-EMG: 8 forearm electrodes, RMS envelope in 12 consecutive 50
ms windows, each normalised by the channel's maximum voluntary contraction (MVC), so every input
feature is non-negative (0..~1) and none is centred. The MLP's first layer therefore sees inputs
that all share one sign: a unit's gradient has the same sign on every one of its weights, and a
large step moves all of them (and the bias) together. With Adam at lr=0.3 (the value of the SGD
logistic-regression baseline on the same features, kept when the model was swapped) the first
few updates push essentially every first-layer unit (and then every second-layer unit) to a
negative pre-activation for every possible input; they output exactly 0, receive no gradient and
never come back. The loss sits at chance, ln(10), for the whole run with no NaN. The fixed run
uses lr=1e-3."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("NinaPro-style sEMG gesture recognition with MVC-normalised RMS features; the "
          "well-known 'dying ReLU with a too-large learning rate' failure (CS231n notes, "
          "many forum threads where the loss plateaus at ln(C))")

N_CH, N_WIN, N_CLS = 8, 12, 10


def make_prototypes(g):
    # each gesture activates a characteristic subset of muscles with a temporal ramp
    base = 0.3 + 0.2 * torch.rand(1, N_CH, generator=g)           # co-contraction
    act = base + 0.5 * torch.rand(N_CLS, N_CH, generator=g) ** 2
    ramp = torch.linspace(0.4, 1.0, N_WIN)
    return act.unsqueeze(-1) * ramp


def make_batch(g, protos, n):
    y = torch.randint(0, N_CLS, (n,), generator=g)
    effort = 0.6 + 0.4 * torch.rand(n, 1, 1, generator=g)
    x = protos[y] * effort
    x = x + 0.08 * torch.rand(n, N_CH, N_WIN, generator=g)       # baseline noise floor
    x = x * torch.exp(0.25 * torch.randn(n, N_CH, N_WIN, generator=g))
    return x.reshape(n, -1).clamp(min=0.0), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    protos = make_prototypes(g)
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(
        nn.Linear(N_CH * N_WIN, 64), nn.ReLU(),
        nn.Linear(64, 64), nn.ReLU(),
        nn.Linear(64, N_CLS)))
    steps = 200
    batches = [make_batch(g, protos, 64) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 0.3)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
