"""Physics-informed output layer for a materials-property regressor: an MLP predicts the energy
level E(x) of a defect state from 12 standardised descriptors (E is in the standardised units of
the training energies) and the observed occupancy is modelled as a Fermi-Dirac factor
f = sigmoid((mu - E) / kT), fitted with MSE.  kT was hard-coded as 0.0259 (room temperature in eV)
although E and mu live in z-scored units where the thermal width of the data is ~0.5.  The
pre-activation (mu - E) / kT is therefore ~40x too large: with mu = 1 every sample starts at
z ~ 25-50, the occupancy sigmoid is pinned at 1, sigmoid'(z) ~ 1e-15 and plain SGD never moves the
energy network; the loss stays at the error of an all-occupied prediction.  Expressing kT in the
same units as E (0.5) keeps the sigmoid in its linear range and the model fits.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "occupancy"
SOURCE = ("Physics-informed sigmoid/Fermi-Dirac (smeared step) output layers; known pattern: a unit "
          "mismatch in the temperature/width of a smoothed step makes the sigmoid a hard step with "
          "vanishing gradients")

N_FEAT = 12


class OccupancyModel(nn.Module):
    def __init__(self, kt):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(N_FEAT, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(),
                                    nn.Linear(64, 1))
        self.occupancy = nn.Sigmoid()
        self.mu = 1.0
        self.kt = kt

    def forward(self, x):
        e = self.energy(x).squeeze(-1)
        return self.occupancy((self.mu - e) / self.kt)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_FEAT, generator=g) / N_FEAT ** 0.5
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, N_FEAT, generator=g)
        e_true = 1.0 + 0.8 * (x @ w) + 0.3 * torch.sin(2.0 * x[:, 0])
        occ = torch.sigmoid((1.0 - e_true) / 0.5) + 0.03 * torch.randn(bs, generator=g)
        batches.append((x, occ.clamp(0.0, 1.0)))
    model = OccupancyModel(kt=0.5 if fixed else 0.0259)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
