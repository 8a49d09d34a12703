"""Importance-weighted autoencoder (Burda et al. 2016) on continuous sensor vectors: amortised
Gaussian encoder q(z|x), Gaussian decoder with a learned per-dimension log noise scale,
K importance samples; the IWAE bound is log (1/K) sum_k w_k with
log w_k = log p(x|z_k) + log p(z_k) - log q(z_k|x).

Mechanism: the user computed the bound literally as `torch.log(torch.exp(log_w).mean(1))`.
At the start log w ~ -30..-60 and exp() is representable, so the run is calm.  As training
proceeds the decoder noise scale shrinks to fit the bulk of the data: for the rare heavy-tailed
readings log w drops below ~-104 for every one of the K samples (exp() underflows to exactly 0,
log(0) = -inf) while for well-fit points log w climbs towards +88 where exp() overflows; the bound
and the loss become inf/NaN mid-run.
ORIGIN: None - the unsafe op is the log-mean-exp inside the loss, not a module.
Fix: the numerically stable form torch.logsumexp(log_w, 1) - log K (the only change)."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "Burda et al. 2016 IWAE; naive log(mean(exp(log_w))) underflow, fixed by logsumexp (common IWAE reimplementation bug)"

LOG2PI = math.log(2 * math.pi)


class IWAE(nn.Module):
    def __init__(self, d_in, width, z_dim, k):
        super().__init__()
        self.k = k
        self.encoder = nn.Sequential(nn.Linear(d_in, width), nn.Tanh(), nn.Linear(width, 2 * z_dim))
        self.decoder = nn.Sequential(nn.Linear(z_dim, width), nn.Tanh(), nn.Linear(width, d_in))
        self.log_sigma = nn.Parameter(torch.zeros(d_in))

    def forward(self, x):
        mu, log_var = self.encoder(x).chunk(2, -1)
        std = (0.5 * log_var).exp()
        eps = torch.randn(x.shape[0], self.k, mu.shape[-1])
        z = mu[:, None] + std[:, None] * eps
        x_mean = self.decoder(z)
        log_px = (-0.5 * ((x[:, None] - x_mean) / self.log_sigma.exp()) ** 2 - self.log_sigma - 0.5 * LOG2PI).sum(-1)
        log_pz = (-0.5 * z ** 2 - 0.5 * LOG2PI).sum(-1)
        log_qz = (-0.5 * eps ** 2 - 0.5 * LOG2PI - torch.log(std[:, None])).sum(-1)
        return log_px + log_pz - log_qz  # (batch, K) log importance weights


def naive_iwae_loss(log_w, _):
    return -torch.log(torch.exp(log_w).mean(1)).mean()


def stable_iwae_loss(log_w, _):
    return -(torch.logsumexp(log_w, 1) - math.log(log_w.shape[1])).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = [16, 24, 20][seed % 3]
    width = [64, 48, 96][seed % 3]
    z_dim = [4, 6, 3][seed % 3]
    k = [5, 10, 8][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    steps = 200
    model = IWAE(d_in, width, z_dim, k)
    A = torch.randn(z_dim, d_in, generator=g)
    batches = []
    for _ in range(steps):
        z = torch.randn(bs, z_dim, generator=g)
        glitch = (torch.rand(bs, 1, generator=g) < 0.02).float()  # rare heavy-tailed readings
        noise = 0.02 * torch.randn(bs, d_in, generator=g) * (1 + 30 * glitch)
        batches.append((torch.tanh(z @ A) + noise, torch.zeros(bs)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=stable_iwae_loss if fixed else naive_iwae_loss,
                batches=batches, steps=steps)
