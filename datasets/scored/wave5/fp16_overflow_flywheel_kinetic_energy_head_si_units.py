"""Physics-consistent surrogate for a flywheel energy-storage unit: an MLP predicts the rotor's
standardised angular velocity from 10 standardised operating features; the model de-standardises it
to rad/s and a small physics head computes the stored kinetic energy E = 0.5 * I * omega^2 (joules)
so that an energy-consistency term can be added to the loss.  Training runs under fp16 autocast
without any special handling: the Linear outputs are fp16 and so is everything computed from them,
including omega^2.  At init the predictions sit near the mean speed (~150 rad/s, E ~ 2e4 J) and
the run looks fine, but as the network learns the fast rotors (omega > 256 rad/s), 0.5 * 2.0 *
omega^2 passes fp16's 65504 limit, the energy becomes inf and the loss inf/NaN.  Computing the
physics head in float32 (omega.float()) is the only change in the fixed run; autocast stays on for
the MLP.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "energy"
SOURCE = ("PyTorch AMP docs (ops that should run in float32; fp16 max 65504); physics-consistency "
          "losses computed in SI units inside autocast regions")

N_FEAT = 10
W_MEAN, W_STD, INERTIA = 150.0, 70.0, 2.0       # rad/s, rad/s, kg m^2
E_SCALE = 5.0e4                                  # J, normalises the energy residual


class KineticEnergy(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, omega):
        if self.fp32:
            omega = omega.float()
        return 0.5 * INERTIA * omega * omega


class FlywheelSurrogate(nn.Module):
    def __init__(self, fp32_physics):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(N_FEAT, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(),
                                 nn.Linear(64, 1))
        self.energy = KineticEnergy(fp32_physics)

    def forward(self, x):
        z = self.mlp(x).squeeze(-1)
        omega = W_MEAN + W_STD * z
        return {"z": z, "energy": self.energy(omega)}


def loss_fn(out, y):
    z_true, e_true = y
    data = ((out["z"].float() - z_true) ** 2).mean()
    phys = (((out["energy"] - e_true) / E_SCALE) ** 2).float().mean()
    return data + 0.1 * phys


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_FEAT, generator=g) / math.sqrt(N_FEAT)
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, N_FEAT, generator=g)
        z = x @ w + 0.3 * torch.tanh(2 * x[:, 0]) + 0.1 * torch.randn(bs, generator=g)
        omega = W_MEAN + W_STD * z
        batches.append((x, (z, 0.5 * INERTIA * omega ** 2)))
    model = FlywheelSurrogate(fp32_physics=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
