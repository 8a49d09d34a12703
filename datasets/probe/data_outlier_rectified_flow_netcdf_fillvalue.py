"""Rectified flow / conditional flow matching on 8x8 temperature-anomaly patches (weather
downscaling style): x_t = (1-t) x0 + t x1, the MLP velocity net regresses v = x1 - x0.
One patch read mid-run (step 120) still carries the NetCDF default _FillValue 9.97e36 over a
missing tile; the squared velocity error overflows to inf, the gradients become inf/NaN and every
later step is NaN. fixed=True drops patches that contain fill values (same batches otherwise).
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Lipman et al. 2023 flow matching / Liu et al. 2023 rectified flow training loop; NetCDF "
          "default float _FillValue 9.969209968386869e36 left unmasked in climate data (common xarray/"
          "netCDF4 pitfall with mask_and_scale disabled)")

SIDE, HID, BATCH, STEPS, BAD_STEP = 8, 256, 64, 200, 120
D = SIDE * SIDE
FILL = 9.969209968386869e36


class TimeEmbedding(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.register_buffer("freqs", torch.exp(-math.log(1000.0) * torch.arange(dim // 2) / (dim // 2)))

    def forward(self, t):
        ang = 1000.0 * t[:, None] * self.freqs[None]
        return torch.cat([ang.sin(), ang.cos()], -1)


class VelocityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.temb = TimeEmbedding()
        self.net = nn.Sequential(nn.Linear(D + 32, HID), nn.SiLU(), nn.Linear(HID, HID), nn.SiLU(),
                                 nn.Linear(HID, HID), nn.SiLU(), nn.Linear(HID, D))

    def forward(self, x_t, t):
        return self.net(torch.cat([x_t, self.temb(t)], -1))


def _fields(n, g):  # smooth anomaly fields: a few random Fourier modes
    yy, xx = torch.meshgrid(torch.linspace(0, 1, SIDE), torch.linspace(0, 1, SIDE), indexing="ij")
    f = torch.zeros(n, SIDE, SIDE)
    for _ in range(3):
        kx, ky = torch.randint(0, 3, (n, 1, 1), generator=g), torch.randint(0, 3, (n, 1, 1), generator=g)
        ph = 2 * math.pi * torch.rand(n, 1, 1, generator=g)
        amp = torch.randn(n, 1, 1, generator=g)
        f = f + amp * torch.cos(2 * math.pi * (kx * xx + ky * yy) + ph)
    return (f / 1.5).reshape(n, D)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = []
    for step in range(STEPS):
        x1 = _fields(BATCH, g)
        if step == BAD_STEP:  # one patch with a missing 3x3 tile stored as the fill value
            k = int(torch.randint(0, BATCH, (1,), generator=g))
            tile = x1[k].reshape(SIDE, SIDE)
            tile[2:5, 3:6] = FILL
        x0 = torch.randn(BATCH, D, generator=g)
        t = torch.rand(BATCH, generator=g)
        if fixed:
            keep = (x1.abs() < 1e6).all(-1)  # mask fill values: drop corrupt patches
            x1, x0, t = x1[keep], x0[keep], t[keep]
        x_t = (1 - t[:, None]) * x0 + t[:, None] * x1
        batches.append(((x_t, t), x1 - x0))
    model = VelocityNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lambda v_pred, v: ((v_pred - v) ** 2).mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
