"""In-flight magnetometer calibration net (LEO smallsat): moment-matrix bmm under fp16 autocast.

Mechanism: the ADCS team estimates the magnetometer hard-iron bias and the local field
magnitude (for the scale check against the IGRF model) from a
window of raw readings taken while the satellite tumbles (ellipsoid-fit style). The network
forms the 4x4 moment matrix of the homogeneous readings [Bx, By, Bz, 1] in micro-tesla with
``torch.bmm(m^T, m)`` and an MLP maps the normalised moments to the calibration parameters.
Training was switched to ``torch.autocast(dtype=float16)`` to speed up the fleet-wide
calibration runs, and autocast runs ``bmm`` in half precision. Over a 40-64-sample window a
diagonal moment sum(Bx^2) is (30-55 uT)^2 * T ~ 3e4-2e5: as soon as a window covers a
high-latitude pass (|B| ~ 45-55 uT) it exceeds the fp16 maximum 65504, the moment is inf,
the normalisation gives inf/NaN and the loss is non-finite. The fp32 run is perfectly calm.

ORIGIN: ``moments`` - the module that computes the moment matrix with bmm, where the fp16
value first passes 65504.

Fix: compute the moment matrix in float32 (autocast disabled for that op, inputs cast with
``.float()``); the rest of the network still runs under fp16 autocast.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "moments"
SOURCE = ("PyTorch AMP docs: ops such as bmm/matmul autocast to float16 and can overflow (max "
          "65504); run overflow-prone reductions in float32. Modelled on learned "
          "magnetometer calibration (ellipsoid-fit moment matrices, Vasconcelos et al. 2011) "
          "for CubeSat ADCS.")


class MomentMatrix(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, m):
        ones = torch.ones_like(m[..., :1])
        h = torch.cat([m, ones], -1)                                    # (B, T, 4)
        if self.fp32:
            with torch.autocast(device_type=m.device.type, enabled=False):
                h = h.float()
                return torch.bmm(h.transpose(1, 2), h) / h.shape[1]
        return torch.bmm(h.transpose(1, 2), h) / h.shape[1]


class MagCalNet(nn.Module):
    def __init__(self, width, fp32):
        super().__init__()
        self.moments = MomentMatrix(fp32)
        self.mlp = nn.Sequential(nn.Linear(16, width), nn.GELU(), nn.Linear(width, width),
                                 nn.GELU(), nn.Linear(width, 4))
        norm = torch.full((4, 4), 300.0)
        norm[3, :] = norm[:, 3] = 5.0
        norm[3, 3] = 1.0
        self.register_buffer("norm", norm)

    def forward(self, m):
        M = self.moments(m)
        f = (M / self.norm).flatten(1)            # uT^2 block / 300, uT block / 5 -> O(1)
        return self.mlp(f)


def _windows(g, n, T):
    # field magnitude follows a dipole-like latitude dependence: 25 uT equator, ~52 uT poles
    lat = (torch.rand(n, 1, 1, generator=g) * 2 - 1) * (math.pi / 2)
    mag = 25 * torch.sqrt(1 + 3 * torch.sin(lat) ** 2)
    d = torch.randn(n, T, 3, generator=g)
    d = d + torch.randn(n, 1, 3, generator=g) * 0.1                      # slow tumble: correlated
    d = d / d.norm(dim=-1, keepdim=True)
    bias = torch.randn(n, 3, generator=g) * 12                           # hard iron [uT]
    scale = 1 + 0.08 * torch.randn(n, 3, generator=g)
    meas = mag * d * scale[:, None] + bias[:, None] + 0.2 * torch.randn(n, T, 3, generator=g)
    y = torch.cat([bias / 12, (mag.view(n, 1) - 38) / 9], 1)
    return meas, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5150 + seed)
    T = [48, 64, 40][seed % 3]
    width = [128, 96, 64][seed % 3]
    lr = [3e-3, 4e-3, 5e-3][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 120
    model = MagCalNet(width, fp32=fixed)
    batches = [_windows(g, bs, T) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
