"""Hybrid (physics + ML) thermal digital twin of a power-electronics heat sink: an MLP maps
operating conditions (load current, coolant flow, ambient temperature, fan duty) to the
surface temperature in kelvin; a physics layer then computes the heat rejected by
convection h*(T - T_amb) plus radiation eps*sigma*(T^4 - T_amb^4), and the loss compares it
with the measured dissipated power (kW).

Mechanism: the user enabled torch.autocast(float16) for speed.  The MLP output is float16,
so the physics layer evaluates T**4 in half precision: (300..400 K)^4 = 8e9..2.6e10, far past
the float16 maximum of 65504, giving inf; inf - inf = NaN and the loss is non-finite at the
very first step.  A GradScaler would not help -- the overflow is in the forward pass.

ORIGIN: `radiation`, the physics module whose T**4 is the first value above 65504.

Fix: run the radiation/physics layer in float32 (autocast disabled and inputs cast with
.float()), the usual 'keep this op in fp32' recipe.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "radiation"
SOURCE = "Stefan-Boltzmann T^4 term in physics-informed/hybrid thermal models under mixed precision (fp16 max 65504); PyTorch AMP docs: ops prone to overflow should run in float32"

_CFG = {0: dict(h=32, lr=1e-3, bs=32, steps=60),
        1: dict(h=64, lr=5e-4, bs=16, steps=80),
        2: dict(h=48, lr=2e-3, bs=24, steps=50)}


class Radiation(nn.Module):
    """q = h_conv*(T - Ta) + eps*sigma*(T^4 - Ta^4), returned in kW for a 0.5 m^2 surface."""

    def __init__(self, fp32: bool):
        super().__init__()
        self.fp32 = fp32
        self.log_h = nn.Parameter(torch.tensor(3.0))  # learnable convection coefficient
        self.eps = 0.85
        self.sigma = 5.670374419e-8

    def forward(self, t, ta):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._q(t.float(), ta.float())
        return self._q(t, ta.to(t.dtype))

    def _q(self, t, ta):
        conv = self.log_h.exp() * (t - ta)
        rad = self.eps * self.sigma * (t ** 4 - ta ** 4)
        return 0.5 * (conv + rad) / 1000.0


class ThermalTwin(nn.Module):
    def __init__(self, h, fp32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(4, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, 1))
        self.radiation = Radiation(fp32)

    def forward(self, x):
        ta = 293.15 + 10.0 * x[:, 2:3]
        t = 313.0 + 15.0 * self.mlp(x)  # surface temperature in K (float16 under autocast)
        return self.radiation(t, ta)


def _batch(g, n):
    x = torch.randn(n, 4, generator=g)
    ta = 293.15 + 10.0 * x[:, 2:3]
    t_true = ta + 25.0 + 12.0 * x[:, 0:1] - 6.0 * x[:, 1:2] - 4.0 * x[:, 3:4].tanh()
    q = 0.5 * (20.0 * (t_true - ta) + 0.85 * 5.670374419e-8 * (t_true ** 4 - ta ** 4)) / 1000.0
    return x, q + 0.01 * torch.randn(n, 1, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    model = ThermalTwin(c["h"], fp32=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"],
                amp_dtype=torch.float16, scaler=None)
