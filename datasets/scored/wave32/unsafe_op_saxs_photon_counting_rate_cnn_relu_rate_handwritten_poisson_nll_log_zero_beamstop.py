"""Small-angle X-ray scattering (SAXS) denoiser on photon-counting detector frames: a small CNN
predicts the expected photon rate per pixel from a short-exposure frame (a few counts per
pixel), trained against an independent frame of the same sample with a hand-written Poisson
negative log-likelihood  mean(rate - k * log(rate) + k log k - k)  (half the deviance).  The rate is made non-negative with a ReLU
on the last conv, and the last conv's bias is initialised at the mean count rate so the run
starts calm (all rates positive, smooth loss decrease).

Mechanism: the beamstop shadow and detector-module gaps record exactly 0 counts. The likelihood
keeps pushing the predicted rate there towards 0; once the last conv's pre-activation crosses 0
for such a pixel, the ReLU returns exactly 0.0 and log(0) = -inf: the term k*log(rate) is
0 * -inf = NaN for zero-count pixels (and +inf where k > 0), so the loss and then every weight
become NaN, after a calm start at a step that depends on the seed.

ORIGIN: "rate_act", the ReLU producing the exact zero fed to the unguarded log (the unsafe op is
the log in the loss; this is the module whose output reaches it).
Fix: guard the log with an epsilon, log(rate + 1e-6) (what F.poisson_nll_loss(log_input=False)
does with eps=1e-8); model, data and optimiser unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "rate_act"
SOURCE = ("torch.nn.functional.poisson_nll_loss docs (eps added to avoid log(0) when "
          "log_input=False); hand-written Poisson NLL returning NaN on zero-rate pixels "
          "(PyTorch forum); SAXS beamstop / module-gap zero-count pixels")

S = 24


class RateCNN(nn.Module):
    def __init__(self, ch, depth, mean_rate):
        super().__init__()
        layers, c = [], 1
        for _ in range(depth):
            layers += [nn.Conv2d(c, ch, 3, padding=1), nn.ReLU()]
            c = ch
        self.body = nn.Sequential(*layers)
        self.out = nn.Conv2d(c, 1, 3, padding=1)
        self.rate_act = nn.ReLU()
        with torch.no_grad():
            self.out.weight.mul_(0.1)
            self.out.bias.fill_(mean_rate)

    def forward(self, x):
        return self.rate_act(self.out(self.body(x)))


def _frames(g, bs, flux):
    yy, xx = torch.meshgrid(torch.arange(S) - S / 2 + 0.5, torch.arange(S) - S / 2 + 0.5,
                            indexing="ij")
    q = (yy ** 2 + xx ** 2).sqrt() / S
    rg = 0.15 + 0.1 * torch.rand(bs, 1, 1, generator=g)          # radius of gyration
    i_q = flux * torch.exp(-(q[None] / rg) ** 2 * 3) + 0.3
    blocked = (q < 0.08) | ((xx.abs() < 1.0) & (yy > 0))          # beamstop + its arm
    blocked = blocked | (yy.round() == 6)                          # module gap
    i_q = i_q * (~blocked)[None]
    a = torch.poisson(i_q.expand(bs, S, S).contiguous(), generator=g)
    b = torch.poisson(i_q.expand(bs, S, S).contiguous(), generator=g)
    return a.unsqueeze(1) / flux, b.unsqueeze(1)


def poisson_nll(rate, counts):
    # NLL minus its saturated value (half the Poisson deviance), so a perfect rate gives ~0.5
    return (rate - counts * torch.log(rate) + torch.xlogy(counts, counts) - counts).mean()


def poisson_nll_eps(rate, counts):
    return (rate - counts * torch.log(rate + 1e-6) + torch.xlogy(counts, counts) - counts).mean()


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1600 + seed)
    ch = [8, 12, 16][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [8, 6, 10][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    flux = [20.0, 15.0, 30.0][seed % 3]
    steps = 150
    batches = [_frames(g, bs, flux) for _ in range(steps)]
    mean_rate = float(torch.stack([b[1].mean() for b in batches[:10]]).mean())
    model = RateCNN(ch, depth, mean_rate)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=poisson_nll_eps if fixed else poisson_nll,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
