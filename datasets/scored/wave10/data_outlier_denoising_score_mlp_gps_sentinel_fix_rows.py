"""A noise-conditional score network (NCSN-style denoising score matching, lambda(sigma) =
sigma^2 weighting, s(x, sigma) = f(x, log sigma) / sigma) learns the density of 2-D GPS
track points (already projected and standardised to km-scale units around the city centre).
One export shard, consumed at step 60, still contains a few rows where the receiver had no fix
and wrote the sentinel -9999 for both coordinates. Those rows hit the first linear layer with
inputs ~1e4, the sigma^2-weighted loss jumps by many orders of magnitude and the
momentum-SGD update it produces blows the weights up: the loss goes to inf/NaN. Fixed: the
same stream with the sentinel rows dropped (replaced by valid points) before batching."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Song & Ermon 2019 NCSN denoising score matching; GPS/NMEA exports using -9999 / 0,0 "
          "as 'no fix' sentinels left in training data (common data-cleaning reports)")


class ScoreMLP(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(3, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 2))

    def forward(self, x_noisy, sigma):
        h = torch.cat([x_noisy, torch.log(sigma)[:, None]], dim=1)
        return self.net(h) / sigma[:, None]


def dsm_loss(score, target):
    z, sigma = target
    # lambda(sigma) = sigma^2 : || sigma * s + z ||^2
    return ((sigma[:, None] * score + z) ** 2).sum(1).mean()


def _tracks(g, n):
    # points along a few curved roads plus GPS jitter, in standardised km units
    t = torch.rand(n, generator=g) * 2 - 1
    road = torch.randint(0, 4, (n,), generator=g).float()
    ang = road * math.pi / 4
    x = torch.stack([t * torch.cos(ang) - 0.3 * torch.sin(3 * t) * torch.sin(ang),
                     t * torch.sin(ang) + 0.3 * torch.sin(3 * t) * torch.cos(ang)], 1)
    return x + 0.03 * torch.randn(n, 2, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    model = ScoreMLP()
    steps, bs = 200, 128
    sigmas = torch.exp(torch.linspace(math.log(0.1), math.log(2.0), 10))
    batches = []
    for s in range(steps):
        x = _tracks(g, bs)
        if s == 60:
            bad = torch.randperm(bs, generator=g)[:4]
            if fixed:
                x[bad] = _tracks(g, 4)           # sentinel rows dropped / resampled
            else:
                x[bad] = -9999.0                 # receiver had no fix
        sigma = sigmas[torch.randint(0, len(sigmas), (bs,), generator=g)]
        z = torch.randn(bs, 2, generator=g)
        batches.append(((x + sigma[:, None] * z, sigma), (z, sigma)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=dsm_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
