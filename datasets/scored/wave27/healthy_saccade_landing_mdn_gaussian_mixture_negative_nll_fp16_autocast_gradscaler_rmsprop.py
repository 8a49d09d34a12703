"""Oculomotor modelling: a mixture density network predicts where a saccade lands. An MLP takes
the target eccentricity and direction, the presence/position of a distractor (global effect),
the saccade latency and the previous saccade's error, and outputs a 3-component 2-D Gaussian
mixture over the landing error (deg, relative to the target): main sequence hits, undershoots
with corrective-saccade intent, and distractor-averaging landings. Trained with the mixture
negative log-likelihood (log-sum-exp, written by hand) and RMSprop, under float16 autocast with a
GradScaler.

Why it is tricky but healthy: (1) the loss is a negative log *density* of landing errors of a few
tenths of a degree, so once the mixture tightens it becomes negative (densities > 1 per deg^2)
and keeps decreasing; (2) the MLP runs in float16 and the GradScaler may skip a step when its
scale is too high for a batch (inf gradients -> exactly-zero update, scale halved), which looks
like a frozen step; (3) the mixture log-likelihood is computed in float32 from the float16 heads
(the usual AMP practice for log-sum-exp). Nothing overflows in the forward pass and the model
learns.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mixture density networks (Bishop 1994) with negative NLL; saccade landing-position "
          "variability and the global effect (Findlay 1982; Van der Stigchel & Nijboer 2011); "
          "PyTorch AMP recipe: autocast + GradScaler, skipped steps on inf gradients")


class SaccadeMDN(nn.Module):
    def __init__(self, width, depth, K):
        super().__init__()
        layers, d = [], 7
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.logits = nn.Linear(d, K)
        self.mu = nn.Linear(d, 2 * K)
        self.log_sigma = nn.Linear(d, 2 * K)
        self.K = K

    def forward(self, x):
        h = self.body(x)
        return self.logits(h), self.mu(h), self.log_sigma(h)


def mdn_nll(out, y):
    logits, mu, log_sigma = (o.float() for o in out)  # mixture likelihood in float32
    K = logits.shape[1]
    mu = mu.view(-1, K, 2)
    log_sigma = log_sigma.view(-1, K, 2).clamp(-5, 3)
    z = (y[:, None, :] - mu) / torch.exp(log_sigma)
    comp = -0.5 * (z ** 2).sum(-1) - log_sigma.sum(-1) - math.log(2 * math.pi)
    return -torch.logsumexp(torch.log_softmax(logits, 1) + comp, 1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    batch = [128, 192, 256][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    steps = 250

    torch.manual_seed(seed)
    model = SaccadeMDN(width, depth, 3)
    batches = []
    for _ in range(steps):
        ecc = 4 + 12 * torch.rand(batch, generator=g)
        ang = torch.rand(batch, generator=g) * 6.283
        distr = (torch.rand(batch, generator=g) < 0.4).float()
        d_off = (torch.rand(batch, generator=g) - 0.5) * 4 * distr  # distractor offset (deg)
        lat = 0.12 + 0.15 * torch.rand(batch, generator=g)
        prev = 0.3 * torch.randn(batch, generator=g)
        # landing error: undershoot ~7% of ecc; short latency + distractor -> averaging landings
        avg = (torch.rand(batch, generator=g) < distr * torch.exp(-(lat - 0.12) / 0.05)).float()
        ex = -0.07 * ecc + 0.3 * prev + avg * 0.5 * d_off
        ey = avg * 0.3 * d_off
        sd = 0.02 * ecc * (1 + avg)
        y = torch.stack([ex, ey], 1) + sd[:, None] * torch.randn(batch, 2, generator=g)
        x = torch.stack([ecc / 10, torch.cos(ang), torch.sin(ang), distr, d_off / 2,
                         (lat - 0.2) / 0.05, prev], 1)
        batches.append((x, y))

    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.99)
    scaler = torch.amp.GradScaler("cpu")
    return {"model": model, "optimizer": opt, "loss_fn": mdn_nll, "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": scaler}
