"""Frame-level monophonic pitch estimator (48 semitone classes, E2-D#6) as a ReLU MLP over a
single non-negative magnitude-spectrum frame (compressed |STFT|^0.5, 128 bins), cross-entropy;
Adagrad.

Mechanism: the Adagrad learning rate 0.5 was copied from a sparse linear model (fastText /
logistic-regression style recipes use lr 0.1-1 with Adagrad). Adagrad's first update is
lr * g/|g| = +-lr for every parameter regardless of gradient size. The spectrum is non-negative,
so the gradients of all the input weights of a hidden unit tend to share the sign of that unit's
back-propagated error; for about half of the units every input weight and the bias drop by
~0.5 at once, which puts the pre-activation far below zero for every frame. The next steps
finish off most of the rest, the deeper layer loses its inputs, and the dead units never get a
gradient again. The loss plateaus near chance (finite) while the same model at a normal
learning rate learns the pitch.

ORIGIN: `mlp.0`, the first Linear layer - its ReLUs die first (the coherent sign step on the
non-negative spectrum happens there).

Fix: Adagrad with lr 0.02 - nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.0"
SOURCE = ("Dying ReLU from an oversized first step of an adaptive optimiser on non-negative "
          "inputs (Lu et al. 2019 'Dying ReLU and initialization'; cs231n notes on dead ReLUs "
          "with high learning rates); Adagrad lr copied from sparse linear-model recipes; "
          "frame-wise pitch classifiers as in early CREPE / Kum & Nam 2016 baselines.")

N_BINS, N_PITCH = 128, 48


class PitchMLP(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        layers = []
        d = N_BINS
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        layers += [nn.Linear(d, N_PITCH)]
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)


def _batch(g, B):
    y = torch.randint(0, N_PITCH, (B,), generator=g)
    f0_bin = 2.0 * 2 ** (y.float() / 12.0)  # bin of the fundamental
    k = torch.arange(N_BINS).float()
    spec = torch.zeros(B, N_BINS)
    bright = 0.5 + 0.4 * torch.rand(B, 1, generator=g)
    for h in range(1, 10):
        spec += (bright[:, 0] ** (h - 1))[:, None] * torch.exp(-0.5 * ((k - h * f0_bin[:, None]) / 0.7) ** 2)
    spec = spec * (0.3 + torch.rand(B, 1, generator=g)) + 0.05 * torch.rand(B, N_BINS, generator=g)
    return spec.sqrt(), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(6000 + seed)
    hidden = [128, 96, 192][seed % 3]
    depth = [2, 3, 2][seed % 3]
    B = [32, 48, 24][seed % 3]
    lr = 0.02 if fixed else [0.5, 0.4, 0.6][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = PitchMLP(hidden, depth)
    batches = [_batch(g, B) for _ in range(steps)]
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
