"""RealNVP-style affine coupling flow (Dinh et al. 2017) on 16-d patches of [0, 1] intensities.
As in the paper, data are dequantised with uniform noise and mapped to logit space,
y = logit(alpha + (1 - 2 alpha) x), inside a ``LogitTransform`` module that also adds its
log-Jacobian to the NLL.  The port set alpha = 0 ("no squashing needed") and dequantises with
x = (k + u) / 256 for 8-bit values k, clamped to [0, 1].  Most batches are fine, but a batch that
contains a saturated/clipped reading (k = 255, stored at full scale 1.0) - three consecutive
batches around step 60 - puts
an exact 0 or 1 into log(x) - log(1 - x): the forward gives +-inf, the log-det term inf - inf =
NaN, and the NLL of that batch is non-finite (and the NaN gradient poisons the weights).  The
fix uses the paper's alpha = 0.05 (epsilon away from the log singularities); nothing else
changes."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "preprocess"
SOURCE = ("Dinh, Sohl-Dickstein, Bengio 'Density estimation using Real NVP' (ICLR 2017) logit "
          "preprocessing with alpha=0.05; NaN reports when alpha is dropped and pixels hit 0 or 1")

D, HID, N_COUPLING = 16, 64, 4


class LogitTransform(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        p = self.alpha + (1 - 2 * self.alpha) * x
        y = torch.log(p) - torch.log(1 - p)
        logdet = (math.log(1 - 2 * self.alpha) - torch.log(p) - torch.log(1 - p)).sum(1)
        return y, logdet


class Coupling(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.st = nn.Sequential(nn.Linear(D, HID), nn.ReLU(), nn.Linear(HID, 2 * D))
        nn.init.zeros_(self.st[-1].weight)
        nn.init.zeros_(self.st[-1].bias)

    def forward(self, y):
        s, t = self.st(y * self.mask).chunk(2, 1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return y * torch.exp(s) + t, s.sum(1)


class RealNVP(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.preprocess = LogitTransform(alpha)
        masks = [(torch.arange(D) % 2 == i % 2).float() for i in range(N_COUPLING)]
        self.couplings = nn.ModuleList([Coupling(m) for m in masks])
        self.loc = nn.Parameter(torch.zeros(D))
        self.log_scale = nn.Parameter(torch.zeros(D))

    def forward(self, x):
        y, logdet = self.preprocess(x)
        for c in self.couplings:
            y, ld = c(y)
            logdet = logdet + ld
        z = (y - self.loc) * torch.exp(-self.log_scale)
        logdet = logdet - self.log_scale.sum()
        log_pz = -0.5 * (z ** 2).sum(1) - 0.5 * D * math.log(2 * math.pi)
        return log_pz + logdet


def nll_bits_per_dim(log_px, _):
    return -(log_px.mean() - D * math.log(256)) / (D * math.log(2))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    basis = torch.randn(3, D, generator=g)

    def sample(n, clipped):
        z = torch.randn(n, 3, generator=g)
        inten = torch.sigmoid(z @ basis * 0.6 + 0.3 * torch.randn(n, D, generator=g))
        k = (inten * 255).round().clamp(1, 254)          # normal readings stay inside the range
        if clipped:                                   # a few sensor readings saturate at full scale
            k[torch.randint(0, n, (3,), generator=g), torch.randint(0, D, (3,), generator=g)] = 255.0
        x = ((k + torch.rand(n, D, generator=g)) / 256.0).clamp(0.0, 1.0)
        x[k == 255] = 1.0                             # clipped readings stored at full scale
        return x, torch.zeros(n)

    steps = 150
    batches = [sample(128, clipped=(s in (60, 61, 62))) for s in range(steps)]
    model = RealNVP(alpha=0.05 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nll_bits_per_dim, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
