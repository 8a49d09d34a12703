"""Vanilla Social-LSTM-style pedestrian trajectory model (without the social pooling grid): an LSTM
reads observed relative displacements and emits, for each of the next 12 steps, the parameters of
a bivariate Gaussian (mu_x, mu_y, log sigma_x, log sigma_y, correlation via tanh), returned as a
tuple; the loss is the bivariate Gaussian negative log-likelihood as in Alahi et al. 2016. Once the
predicted sigmas shrink below ~0.16 (displacements are in metres per 0.4 s frame) the NLL becomes
negative and keeps decreasing - alarming-looking for a 'loss', but it is a density, not an error,
and training is healthy (finite, decreasing)."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Social LSTM (Alahi et al. CVPR 2016) bivariate Gaussian NLL; negative NLL is normal for densities"

T_OBS, T_PRED = 8, 12


class GaussianLSTM(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.embed = nn.Linear(2, 32)
        self.lstm = nn.LSTM(32, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 5)

    def forward(self, obs, fut_teacher):
        x = torch.cat([obs, fut_teacher[:, :-1]], 1)            # teacher forcing as in the paper
        h, _ = self.lstm(torch.relu(self.embed(x)))
        p = self.out(h[:, T_OBS - 1:])
        mu = p[..., :2]
        log_sigma = p[..., 2:4]
        rho = torch.tanh(p[..., 4])
        return mu, log_sigma, rho


def bivariate_nll(out, target):
    mu, log_sigma, rho = out
    s = log_sigma.exp()
    z = (target - mu) / s
    one_m_rho2 = (1 - rho ** 2).clamp(min=1e-6)
    q = (z[..., 0] ** 2 + z[..., 1] ** 2 - 2 * rho * z[..., 0] * z[..., 1]) / one_m_rho2
    nll = 0.5 * q + log_sigma.sum(-1) + 0.5 * torch.log(one_m_rho2) + math.log(2 * math.pi)
    return nll.mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GaussianLSTM()
    steps = 200
    batches = []
    for _ in range(steps):
        B = 64
        speed = 0.3 + 0.4 * torch.rand(B, generator=g)
        heading = torch.rand(B, generator=g) * 2 * math.pi
        turn = torch.randn(B, generator=g) * 0.05
        t = torch.arange(T_OBS + T_PRED).float()
        ang = heading[:, None] + turn[:, None] * t
        d = torch.stack([torch.cos(ang), torch.sin(ang)], -1) * speed[:, None, None]
        d = d + 0.03 * torch.randn(d.shape, generator=g)
        batches.append(((d[:, :T_OBS], d[:, T_OBS:]), d[:, T_OBS:]))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=bivariate_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
