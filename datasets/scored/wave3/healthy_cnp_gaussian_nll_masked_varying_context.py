"""Conditional neural process (Garnelo et al. 2018) for 1-D function regression: each task is a
random sine-like curve; a context set of 3-40 (x, y) points (padded to a fixed size, with a mask) is
encoded point-wise, mean-pooled with the mask, and a decoder predicts a Gaussian mean and
standard deviation (softplus, floored at 0.01) at target locations. The loss is the Gaussian negative
log-likelihood of the targets. Things that look alarming are normal here: the loss has no floor at
zero (an NLL goes negative as soon as the predicted sigma is small and accurate, and individual
well-covered tasks already do), the per-step value jumps with the random context size
(a task with 3 points is much harder than one with 40), padded context slots get exactly zero
gradient, and the inputs are a tuple with a float mask. Trains normally with Adam."""
import math, torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Conditional Neural Processes (Garnelo et al. 2018) / deepmind neural-processes notebook: negative Gaussian NLL with varying context size"

class CNP(nn.Module):
    def __init__(self, hid, rdim):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(2, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, rdim))
        self.decoder = nn.Sequential(nn.Linear(rdim + 1, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, 2))
    def forward(self, cx, cy, cmask, tx):
        r = self.encoder(torch.cat([cx, cy], -1)) * cmask
        r = r.sum(1) / cmask.sum(1)
        h = self.decoder(torch.cat([r.unsqueeze(1).expand(-1, tx.shape[1], -1), tx], -1))
        mu, raw = h.chunk(2, -1)
        return mu, 0.01 + 0.99 * F.softplus(raw)

def gauss_nll(out, ty):
    mu, sigma = out
    return (0.5 * math.log(2 * math.pi) + torch.log(sigma) + 0.5 * ((ty - mu) / sigma) ** 2).mean()

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(171 + seed)
    hid, rdim, bs, lr, steps, nt = [(64, 64, 16, 1e-3, 250, 30), (48, 32, 32, 2e-3, 200, 24), (64, 48, 24, 1e-3, 280, 40)][seed]
    maxc = 40
    model = CNP(hid, rdim)
    batches = []
    for _ in range(steps):
        amp = 0.5 + 1.5 * torch.rand(bs, 1, 1, generator=g)
        ph = math.pi * torch.rand(bs, 1, 1, generator=g)
        fr = 0.8 + 0.7 * torch.rand(bs, 1, 1, generator=g)
        cx = 4 * torch.rand(bs, maxc, 1, generator=g) - 2
        tx = 4 * torch.rand(bs, nt, 1, generator=g) - 2
        f = lambda x: amp * torch.sin(fr * x * 2 + ph)
        cy = f(cx) + 0.02 * torch.randn(bs, maxc, 1, generator=g)
        ty = f(tx) + 0.02 * torch.randn(bs, nt, 1, generator=g)
        nctx = int(torch.randint(3, maxc + 1, (1,), generator=g))
        cmask = torch.zeros(bs, maxc, 1); cmask[:, :nctx] = 1.0
        cy = cy * cmask
        batches.append(((cx, cy, cmask, tx), ty))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=gauss_nll, batches=batches, steps=steps, amp_dtype=None, scaler=None)
