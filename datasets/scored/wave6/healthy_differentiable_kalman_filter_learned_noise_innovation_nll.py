"""A differentiable Kalman filter tracks a vehicle along a road (constant-velocity model, position
measured by a GNSS receiver) and learns its noise model end-to-end: a scalar process-noise
intensity log q and a small network that maps the receiver's per-epoch quality indicators (number
of satellites, HDOP; standardised) to the measurement-noise log-variance, i.e. a heteroscedastic
uncertainty head inside a filter. The loss is the Gaussian negative log-likelihood of the
innovations (prediction-error decomposition of the likelihood), averaged over time and batch. The
tracker works in kilometres, so the true measurement variances are ~1e-6 km^2 while the initial
guesses are ~1 km^2. The run looks alarming but is healthy: the first gradients are large, the NLL
crosses zero after ~25 steps and keeps going negative (a negative loss is normal for a density whose
variances are small in the chosen units), and it is still falling at the end (its floor, set by the true
noise, is a few nats lower). There is no instability: the loss falls smoothly as the noise model approaches the truth.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Haarnoja et al. 2016 'Backprop KF'; Abbeel et al. 2005 'Discriminative training of Kalman "
          "filters'; learning noise covariances by maximising the innovation likelihood "
          "(prediction-error decomposition, Harvey 1990).")

DT = 0.5
T = 40


class LearnedNoiseKF(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_q = nn.Parameter(torch.tensor(0.0))
        self.r_net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, z, quality):
        B = z.shape[0]
        F = torch.tensor([[1.0, DT], [0.0, 1.0]])
        Qb = torch.tensor([[DT ** 3 / 3, DT ** 2 / 2], [DT ** 2 / 2, DT]])
        q = torch.exp(self.log_q)
        log_r = self.r_net(quality).squeeze(-1)                  # (B, T)
        x = torch.stack([z[:, 0], torch.zeros(B)], 1)
        P = torch.eye(2).expand(B, 2, 2) * 1e-3
        innovs, svars = [], []
        for k in range(1, T):
            x = x @ F.T
            P = F @ P @ F.T + q * Qb
            S = P[:, 0, 0] + torch.exp(log_r[:, k])
            nu = z[:, k] - x[:, 0]
            K = P[:, :, 0] / S.unsqueeze(1)
            x = x + K * nu.unsqueeze(1)
            P = P - K.unsqueeze(2) * P[:, 0, :].unsqueeze(1)
            innovs.append(nu)
            svars.append(S)
        return {"innovation": torch.stack(innovs, 1), "innovation_var": torch.stack(svars, 1)}


def _tracks(g, B):
    q_true = 0.3
    x = torch.zeros(B, 2)
    x[:, 1] = 10 + 5 * torch.randn(B, generator=g)
    nsat = torch.randint(4, 14, (B, T), generator=g).float()
    hdop = 0.6 + 3.0 * torch.rand(B, T, generator=g) * (nsat < 7).float() + 0.3 * torch.rand(B, T, generator=g)
    sigma_meas = 0.8 * hdop
    Lq = torch.linalg.cholesky(torch.tensor([[DT ** 3 / 3, DT ** 2 / 2], [DT ** 2 / 2, DT]]) * q_true)
    zs = []
    for k in range(T):
        if k > 0:
            x = x @ torch.tensor([[1.0, DT], [0.0, 1.0]]).T + torch.randn(B, 2, generator=g) @ Lq.T
        zs.append(x[:, 0] + sigma_meas[:, k] * torch.randn(B, generator=g))
    z = torch.stack(zs, 1) / 1000.0          # tracker works in kilometres
    quality = torch.stack([(nsat - 9) / 3, (hdop - 1.5) / 1.0], -1)
    return (z, quality), torch.zeros(B, T - 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7100 + seed)
    steps = 150
    pool = [_tracks(g, 32) for _ in range(25)]
    batches = [pool[i % len(pool)] for i in range(steps)]
    model = LearnedNoiseKF()
    opt = torch.optim.Adamax(model.parameters(), lr=2e-2)

    def loss_fn(out, _zero):
        nu, S = out["innovation"], out["innovation_var"]
        return 0.5 * (nu ** 2 / S + torch.log(S) + math.log(2 * math.pi)).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
