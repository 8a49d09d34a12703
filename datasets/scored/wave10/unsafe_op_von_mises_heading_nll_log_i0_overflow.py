"""Vehicle heading forecaster with a von Mises likelihood: a GRU reads the last 10 (heading as
cos/sin, speed, yaw-rate) observations of an agent and predicts the next heading as a von Mises
distribution (mean direction from a 2-vector, concentration kappa = exp(log-kappa head)). The NLL is
written straight from the textbook, -kappa*cos(theta-mu) + log(2*pi*I0(kappa)), with
torch.special.i0. Training is calm while kappa is small, but the highway data have very low heading
noise, so the model (correctly) keeps raising kappa; once kappa passes ~90 I0(kappa) overflows
float32, log(I0) = inf, the loss is inf and its backward (I1/I0 = inf/inf) poisons the weights with
NaN. Fixed: the numerically safe identity log I0(k) = log(i0e(k)) + k (exponentially scaled Bessel),
nothing else changed."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "kappa_head"
SOURCE = ("log(I0(kappa)) overflow in von Mises NLL (scipy/pyro use i0e; PyTorch "
          "torch.distributions.VonMises uses _log_modified_bessel_fn for this reason)")

T_HIST = 10


class HeadingForecaster(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.mu_head = nn.Linear(hidden, 2)
        self.kappa_head = nn.Linear(hidden, 1)

    def forward(self, hist):
        _, h = self.gru(hist)
        h = h[-1]
        v = self.mu_head(h)
        mu = torch.atan2(v[:, 1], v[:, 0] + 1e-6)
        log_kappa = self.kappa_head(h).squeeze(-1)
        return mu, log_kappa


def make_loss(safe):
    def loss_fn(out, theta):
        mu, log_kappa = out
        kappa = torch.exp(log_kappa)
        if safe:
            log_i0 = torch.log(torch.special.i0e(kappa)) + kappa
        else:
            log_i0 = torch.log(torch.special.i0(kappa))
        nll = -kappa * torch.cos(theta - mu) + math.log(2 * math.pi) + log_i0
        return nll.mean()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = HeadingForecaster()
    steps, B = 260, 64
    batches = []
    for _ in range(steps):
        h0 = (torch.rand(B, generator=g) * 2 - 1) * math.pi
        yaw_rate = torch.randn(B, generator=g) * 0.08          # rad per step, gentle curves
        speed = 5 + 25 * torch.rand(B, generator=g)
        t = torch.arange(T_HIST + 1).float()
        heading = h0[:, None] + yaw_rate[:, None] * t[None] + 0.01 * torch.randn(B, T_HIST + 1, generator=g)
        hist = torch.stack([torch.cos(heading[:, :-1]), torch.sin(heading[:, :-1]),
                            (speed[:, None] / 30).expand(B, T_HIST), yaw_rate[:, None].expand(B, T_HIST) * 10], -1)
        target = torch.remainder(heading[:, -1] + math.pi, 2 * math.pi) - math.pi
        batches.append((hist, target))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(safe=fixed), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
