"""Healthy: MultiPath-style multimodal trajectory forecaster.  An MLP encoder over the
agent's past track (10 steps x (x, y)) feeds a Gaussian-mixture head over K future
trajectories (mode logits, per-mode means, per-mode log-std); the loss is the exact mixture
negative log-likelihood computed with logsumexp.

Why it looks alarming but is fine: the NLL of a continuous density is not bounded below
by 0; once the predicted std shrinks the per-step NLL crosses zero and on many batches
is negative (down to about -1.3 nats), jumping between signs from batch to batch, while
the first steps start high (~4-5) as the log-std head and mode logits sort themselves out.  Log-std is clamped to [-5, 3], the
mixture uses log_softmax + logsumexp, so nothing is unsafe; the run converges.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "MultiPath (Chai et al. 2019) / MTP GMM trajectory heads: practitioners asking why the NLL loss is negative and still decreasing"


class MultiPath(nn.Module):
    def __init__(self, d, K, H):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(20, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU())
        self.logits = nn.Linear(d, K)
        self.mu = nn.Linear(d, K * H * 2)
        self.log_std = nn.Linear(d, K)
        self.K, self.H = K, H

    def forward(self, past):
        h = self.enc(past.flatten(1))
        return (self.logits(h), self.mu(h).view(-1, self.K, self.H, 2),
                self.log_std(h).clamp(-5.0, 3.0))


def gmm_nll(out, fut):
    logits, mu, log_std = out
    H = fut.shape[1]
    d2 = ((fut[:, None] - mu) ** 2).sum(dim=(2, 3))                  # (B, K)
    ll = -0.5 * d2 / torch.exp(2 * log_std) - 2 * H * (log_std + 0.5 * math.log(2 * math.pi))
    return -(torch.logsumexp(F.log_softmax(logits, -1) + ll, dim=-1)).mean() / H


def _batch(g, B, H):
    v = torch.randn(B, 2, generator=g) * 0.5
    t = torch.arange(-9, 1, dtype=torch.float32)[None, :, None]
    past = t * v[:, None] + 0.01 * torch.randn(B, 10, 2, generator=g)
    turn = torch.randint(0, 3, (B, 1, 1), generator=g).float() - 1.0   # left / straight / right
    tf = torch.arange(1, H + 1, dtype=torch.float32)[None, :, None]
    lat = torch.stack([-v[:, 1], v[:, 0]], -1)[:, None]
    fut = tf * v[:, None] + turn * 0.05 * tf ** 2 * lat + 0.02 * torch.randn(B, H, 2, generator=g)
    return past, fut


def build(seed: int, fixed: bool = False) -> dict:
    d, K, lr, B = [(64, 3, 3e-3, 32), (96, 4, 2e-3, 24), (48, 3, 4e-3, 48)][seed % 3]
    torch.manual_seed(seed)
    H = 6
    model = MultiPath(d, K, H)
    g = torch.Generator().manual_seed(9000 + seed)
    steps = 250
    batches = [_batch(g, B, H) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=gmm_nll, batches=batches, steps=steps)
