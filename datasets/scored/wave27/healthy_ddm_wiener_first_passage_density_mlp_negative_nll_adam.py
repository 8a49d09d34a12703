"""Behavioural modelling: a neural drift-diffusion model. An MLP maps each trial's condition
(signed motion coherence, speed/accuracy instruction, previous outcome) to the DDM parameters
(drift v, boundary separation a, non-decision time t0; unbiased start w = 0.5), and the model is
fitted to joint choice/RT data by maximising the Wiener first-passage-time likelihood (Navarro &
Fuss 2009 small-time series, written by hand), with Adam.

Why it is tricky but healthy: the loss is a negative log *density* of reaction times in seconds.
Once the model captures the RT distributions (peaked within ~100-300 ms), densities exceed 1 and
the mean NLL goes from positive values at the start to negative ones, and it keeps going down. A
naive monitor may flag the negative loss, or the exp/log series as unsafe, but every term is
bounded: t - t0 > 0 by construction (t0 < the shortest possible RT), the series is evaluated in
log space with logsumexp, and the parameters go through softplus/sigmoid. Nothing is wrong.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Navarro & Fuss 2009 'Fast and accurate calculations for first-passage times in Wiener "
          "diffusion models'; HDDM / PyDDM likelihoods (negative log-likelihoods of RT densities "
          "are routinely negative); neural-network parameterised DDMs (e.g. Fengler et al. 2021)")


class NeuralDDM(nn.Module):
    def __init__(self, width, depth, t0_max):
        super().__init__()
        layers, d = [], 4
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ELU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.params = nn.Linear(d, 3)
        self.t0_max = t0_max

    def forward(self, x):
        p = self.params(self.body(x))
        v = p[:, 0] * 3.0
        a = nn.functional.softplus(p[:, 1]) + 0.3
        t0 = self.t0_max * torch.sigmoid(p[:, 2])
        return torch.stack([v, a, t0], 1)


def wiener_nll(params, data, K=6):
    v, a, t0 = params.unbind(1)
    rt, choice = data.unbind(1)           # choice 1 = upper boundary
    t = rt - t0                            # > 0 by construction
    vv = torch.where(choice > 0.5, -v, v)  # upper-boundary density = lower density with -v
    w = 0.5
    u = t / a ** 2
    k = torch.arange(-K, K + 1, dtype=t.dtype)
    wk = w + 2 * k[None, :]                # (1, 2K+1)
    # log of sum_k (w+2k) exp(-(w+2k)^2 / (2u)) with signed terms: split positive/negative parts
    logmag = torch.log(wk.abs()) - wk ** 2 / (2 * u[:, None])
    pos = torch.logsumexp(torch.where(wk > 0, logmag, torch.full_like(logmag, -1e4)), 1)
    neg = torch.logsumexp(torch.where(wk < 0, logmag, torch.full_like(logmag, -1e4)), 1)
    log_series = pos + torch.log1p(-torch.exp(neg - pos))
    log_fstd = -0.5 * math.log(2 * math.pi) - 1.5 * torch.log(u) + log_series
    log_f = log_fstd - 2 * torch.log(a) - vv * a * w - vv ** 2 * t / 2
    return -log_f.mean()


def _simulate(n, g, dt=0.002):
    coh = torch.tensor([0.0, 0.032, 0.064, 0.128, 0.256, 0.512])[torch.randint(0, 6, (n,), generator=g)]
    sgn = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
    speed = (torch.rand(n, generator=g) < 0.5).float()
    prev_err = (torch.rand(n, generator=g) < 0.2).float()
    v = 10.0 * sgn * coh
    a = 1.4 - 0.6 * speed + 0.2 * prev_err
    t0 = 0.3
    x = torch.zeros(n)
    rt = torch.zeros(n)
    done = torch.zeros(n, dtype=torch.bool)
    choice = torch.zeros(n)
    for i in range(1, 2500):
        x = torch.where(done, x, x + v * dt + math.sqrt(dt) * torch.randn(n, generator=g))
        hit_up = (~done) & (x >= a / 2)
        hit_lo = (~done) & (x <= -a / 2)
        rt = torch.where(hit_up | hit_lo, torch.full_like(rt, i * dt), rt)
        choice = torch.where(hit_up, torch.ones_like(choice), choice)
        done = done | hit_up | hit_lo
        if bool(done.all()):
            break
    keep = done
    feats = torch.stack([sgn * coh * 4, coh * 4, speed, prev_err], 1)
    return feats[keep], torch.stack([rt[keep] + t0, choice[keep]], 1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [32, 64, 48][seed % 3]
    depth = [2, 2, 3][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [6e-3, 8e-3, 5e-3][seed % 3]
    steps = 250

    feats, data = _simulate(batch * steps + 500, g)
    torch.manual_seed(seed)
    model = NeuralDDM(width, depth, t0_max=0.28)
    batches = [(feats[i * batch:(i + 1) * batch], data[i * batch:(i + 1) * batch]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": wiener_nll, "batches": batches,
            "steps": steps}
