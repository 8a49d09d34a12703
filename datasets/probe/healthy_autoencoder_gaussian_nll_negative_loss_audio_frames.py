"""Healthy: conv autoencoder on log-mel frames with a heteroscedastic Gaussian NLL
(nn.GaussianNLLLoss, predicted per-bin variance), Adam.

Looks alarming: the loss crosses zero and becomes increasingly negative (a NLL, not an error), and
the variance head drives some variances small so gradients get large; this is the expected
behaviour of a well-fitting density model, not a failure. The loss decreases steadily.
ORIGIN: None (healthy).
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "heteroscedastic autoencoders / Gaussian decoders (nn.GaussianNLLLoss docs): negative NLL is normal"


class AE(nn.Module):
    def __init__(self, M, w, z):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv1d(M, w, 3, padding=1), nn.ReLU(), nn.Conv1d(w, z, 3, padding=1))
        self.dec = nn.Sequential(nn.Conv1d(z, w, 3, padding=1), nn.ReLU(), nn.Conv1d(w, 2 * M, 3, padding=1))

    def forward(self, x):
        mu, logv = self.dec(self.enc(x)).chunk(2, dim=1)
        return mu, F.softplus(logv) + 1e-4


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, z, bs, lr, steps = [(32, 8, 16, 3e-3, 80), (24, 6, 12, 2e-3, 100), (48, 10, 20, 4e-3, 60)][seed % 3]
    M, T = 16, 20
    model = AE(M, w, z)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    basis = torch.randn(4, M, 1, generator=g)
    nll = nn.GaussianNLLLoss()
    loss_fn = lambda out, y: nll(out[0], y, out[1])
    batches = []
    for _ in range(steps):
        c = torch.randn(bs, 4, 1, T, generator=g)
        x = (c * basis).sum(1) + 0.05 * torch.randn(bs, M, T, generator=g)
        batches.append((x, x))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
