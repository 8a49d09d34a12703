"""Masked autoregressive flow (MADE blocks, affine z = (x - mu) * exp(-alpha), unclamped as in
Papamakarios et al. 2017) fitting the density of MiniBooNE-style particle-ID features streamed
in event order. The raw MiniBooNE file has events whose columns are all -999 (failed
reconstruction); the MAF preprocessing drops them with `data[:, 0] < -100`, this loader does
not. Standardisation constants come from the first (clean) shard, so the few bad events, reached
mid-run, enter the flow 100-600 sigma out: block 0 returns z ~ 1e16, block 1 alpha ~ 1e15,
exp(-alpha) overflows, the NLL is inf/NaN and Adam writes NaN into every weight.
fixed=True: the same batches with the sentinel rows filtered out (the MAF repo's filter).
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("gpapamak/maf datasets/miniboone.py ('Remove some random outliers: "
          "indices = (data[:, 0] < -100)'), copied into bayesiains/nsf and ffjord loaders; "
          "MiniBooNE PID events with all features = -999; MAF from Papamakarios et al. 2017.")

D = 10


class MaskedLinear(nn.Linear):
    def __init__(self, n_in, n_out, mask):
        super().__init__(n_in, n_out)
        self.register_buffer("mask", mask)

    def forward(self, x):
        return nn.functional.linear(x, self.weight * self.mask, self.bias)


class MADE(nn.Module):
    def __init__(self, d, hidden, g):
        super().__init__()
        deg_in = torch.arange(1, d + 1)
        deg_h = torch.randint(1, d, (hidden,), generator=g)
        m1 = (deg_h.unsqueeze(1) >= deg_in.unsqueeze(0)).float()
        m2 = (deg_h.unsqueeze(1) >= deg_h.unsqueeze(0)).float()
        m3 = (deg_in.unsqueeze(1) > deg_h.unsqueeze(0)).float()
        self.net = nn.Sequential(
            MaskedLinear(d, hidden, m1), nn.ReLU(),
            MaskedLinear(hidden, hidden, m2), nn.ReLU(),
        )
        self.mu = MaskedLinear(hidden, d, m3)
        self.alpha = MaskedLinear(hidden, d, m3)

    def forward(self, x):
        h = self.net(x)
        mu, alpha = self.mu(h), self.alpha(h)
        z = (x - mu) * torch.exp(-alpha)
        return z, -alpha.sum(-1)


class MAF(nn.Module):
    def __init__(self, d, hidden, n_blocks, g):
        super().__init__()
        self.blocks = nn.ModuleList(MADE(d, hidden, g) for _ in range(n_blocks))

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for i, blk in enumerate(self.blocks):
            x, ld = blk(x)
            logdet = logdet + ld
            x = x.flip(-1)  # reverse the autoregressive order between blocks
        return x, logdet


def flow_nll(out, target):
    z, logdet = out
    log_pz = -0.5 * (z ** 2).sum(-1) - 0.5 * z.shape[-1] * math.log(2 * math.pi)
    return -(log_pz + logdet).mean()


def _events(n, g):
    # correlated, skewed features (energies, hit counts, track-fit quality) driven by a few
    # latent shower properties plus detector noise
    lat = torch.randn(n, 3, generator=g)
    mix = torch.randn(D, 3, generator=g)
    x = lat @ mix.T + 0.15 * torch.randn(n, D, generator=g)
    x[:, 1] = x[:, 1] + 0.8 * lat[:, 0] ** 2
    x[:, 3] = torch.exp(0.4 * x[:, 3])
    x[:, 5] = x[:, 5] * (1.0 + 0.5 * torch.tanh(lat[:, 2]))
    return 3.0 * x + 10.0


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    steps, bs = 240, 128
    raw = _events(steps * bs, g)
    # a few missing-reconstruction events (all columns -999) somewhere in the second half
    bad_step = int(steps * (0.5 + 0.15 * torch.rand(1, generator=g).item()))
    n_bad = 2 + int(torch.randint(0, 3, (1,), generator=g))
    rows = bad_step * bs + torch.randperm(bs, generator=g)[:n_bad]
    raw[rows] = -999.0
    shard0 = raw[: 16 * bs]
    mean, std = shard0.mean(0), shard0.std(0)
    batches = []
    for s in range(steps):
        xb = raw[s * bs:(s + 1) * bs]
        if fixed:
            xb = xb[~(xb[:, 0] < -100)]
        xb = (xb - mean) / std
        batches.append((xb, xb))
    model = MAF(D, hidden=64, n_blocks=4, g=g)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=flow_nll, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
