"""Differentiable Kalman filter for a constant-velocity target tracked by three noisy range
sensors: a learned fusion layer maps the three readings to one position measurement, the process
model is known, and the measurement-noise standard deviation sigma_r (R = sigma_r^2, a scalar
Cholesky factor) is learned end-to-end on the filtered-state error against ground truth. sigma_r
was initialised from the sensor datasheet (UWB ranging, sigma = 200 mm, so R = 4e4) while the
whole pipeline works in metres. With R four orders of magnitude too large the Kalman gain K =
P/(P+R) is ~1e-3, the filter ignores the measurements and coasts on its zero prior, and every
gradient that has to pass through K (to the fusion layer, and to sigma_r itself, whose gradient
scales like P/sigma_r^3) is tiny: SGD barely moves anything and the loss sits at the prior error
for the whole run (no NaN, silent stall). The fixed run initialises sigma_r at 1 (unit variance
in the working units)."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "kf"
SOURCE = ("KalmanNet / differentiable-filter literature (Haarnoja et al. 2016 'Backprop KF'); "
          "common report of a learned Kalman filter that 'does not use the measurements' "
          "because noise covariances were initialised in the wrong units")

DT, T = 0.1, 40


class NoiseKF(nn.Module):
    """Constant-velocity Kalman filter with a known process noise (Q = sigma_q^2 * G) and a
    learned measurement-noise standard deviation (scalar Cholesky factor, R = sigma_r^2)."""
    def __init__(self, sigma_r_init):
        super().__init__()
        self.register_buffer("sigma_q", torch.tensor(0.3))
        self.sigma_r = nn.Parameter(torch.full((), float(sigma_r_init)))

    def forward(self, z):  # z: [B, T] fused position measurements
        B = z.shape[0]
        q, r = self.sigma_q ** 2, self.sigma_r ** 2
        p = torch.zeros(B, device=z.device); v = torch.zeros(B, device=z.device)
        P00, P01, P11 = torch.ones(()), torch.zeros(()), torch.ones(())
        q00, q01, q11 = q * DT ** 3 / 3, q * DT ** 2 / 2, q * DT
        ps, vs = [], []
        for t in range(z.shape[1]):
            # predict
            p = p + DT * v
            P00, P01, P11 = (P00 + 2 * DT * P01 + DT * DT * P11 + q00,
                             P01 + DT * P11 + q01,
                             P11 + q11)
            # update
            S = P00 + r
            k0, k1 = P00 / S, P01 / S
            innov = z[:, t] - p
            p = p + k0 * innov
            v = v + k1 * innov
            P00, P01, P11 = (1 - k0) * P00, (1 - k0) * P01, P11 - k1 * P01
            ps.append(p); vs.append(v)
        return torch.stack(ps, 1), torch.stack(vs, 1)


class Tracker(nn.Module):
    def __init__(self, sigma_r_init):
        super().__init__()
        self.fuse = nn.Linear(3, 1)
        self.kf = NoiseKF(sigma_r_init)

    def forward(self, readings):  # readings: [B, T, 3]
        z = self.fuse(readings).squeeze(-1)
        pos, vel = self.kf(z)
        return {"pos": pos, "vel": vel}


def make_batch(g, n):
    p = torch.randn(n, generator=g) * 2.0
    v = torch.randn(n, generator=g)
    pos = []
    for _ in range(T):
        v = v + 0.3 * math.sqrt(DT) * torch.randn(n, generator=g)
        p = p + DT * v
        pos.append(p)
    pos = torch.stack(pos, 1)
    vel = torch.diff(pos, dim=1, prepend=pos[:, :1] - DT * pos.new_zeros(n, 1)) / DT
    gain = torch.tensor([1.0, 0.8, -1.2])
    offs = torch.tensor([0.0, 0.3, -0.2])
    noise = torch.tensor([0.3, 0.5, 0.4])
    readings = pos.unsqueeze(-1) * gain + offs + noise * torch.randn(n, T, 3, generator=g)
    return readings, {"pos": pos, "vel": vel}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    sigma_r_init = 1.0 if fixed else 200.0   # datasheet: sigma = 200 mm
    model = Tracker(sigma_r_init)
    steps = 150
    batches = [make_batch(g, 64) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_fn(out, y):
        return (nn.functional.mse_loss(out["pos"], y["pos"])
                + 0.1 * nn.functional.mse_loss(out["vel"], y["vel"]))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
