"""A blind room-acoustics estimator predicts the reverberation time (RT60, z-scored) of a room from
Schroeder energy-decay curves: 24 frequency bands x 8 time slices of the normalised decay, all values
in (0, 1] and strongly correlated with each other. A three-layer ReLU MLP is trained with SGD,
momentum 0.9, lr = 0.2 (the lr of the team's sound-event classifier). Because every input is
positive and the features move together, each first-layer unit sees a pre-activation that is close
to w.mean(x) + b for every room, so about a third of the units are already silent on the whole data
set at step 0 and the rest sit close to their kink. With lr 0.2 and momentum the loss spikes (to ~4-7)
within the first ten steps; each spike pushes whole groups of units' weights and biases to the
negative side for every input, so by step ~12 about 80% of net.0's units and most of net.2's are
dead on the entire training set, and soon every net.2 unit is. The model is reduced to the output
bias and the loss settles at the target variance (~1) for the rest of the run. The fix is the lr
alone (0.01).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.0"
SOURCE = ("Dying ReLU under large SGD steps (Lu et al. 2019 'Dying ReLU and initialization'; CS231n notes: 'as much as 40% of your network can be dead if the learning rate is set too high'); blind RT60 estimation from energy-decay features (ACE challenge).")

NB = 24          # octave / third-octave bands
NT = 8           # decay-curve time slices per band
LR_U = 0.2


class RT60Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(NB * NT, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                 nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _rooms(g, n):
    rt = 0.3 + 1.7 * torch.rand(n, 1, generator=g)                  # broadband RT60 (s)
    tilt = 1 + 0.6 * (torch.rand(n, 1, generator=g) - 0.5) * torch.linspace(-1, 1, NB).view(1, NB)
    rt_b = (rt * tilt).unsqueeze(-1)                                  # (n, NB, 1)
    t = torch.linspace(0.05, 0.6, NT).view(1, 1, NT)
    # normalised energy-decay curve per band: exp(-13.8 t / RT60), plus a noise floor
    edc = torch.exp(-13.8 * t / rt_b) + 0.02 * torch.rand(n, NB, NT, generator=g)
    return edc.reshape(n, NB * NT), rt.squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2500 + seed)
    x, y = _rooms(g, 30 * 32)
    y = (y - y.mean()) / y.std()
    model = RT60Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else LR_U, momentum=0.9)
    steps = 150
    pool = [(x[i * 32:(i + 1) * 32], y[i * 32:(i + 1) * 32]) for i in range(30)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(pred, t):
        return ((pred - t) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
