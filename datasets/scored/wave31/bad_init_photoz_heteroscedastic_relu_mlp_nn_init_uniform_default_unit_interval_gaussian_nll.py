"""Photometric-redshift regressor with aleatoric uncertainty (colours + r mag -> mean z and
log-variance), deep ReLU MLP trained with GaussianNLLLoss and Adam.

Mechanism: the author re-initialises every Linear with ``nn.init.uniform_(m.weight)`` believing the
call keeps a sensible fan-in range like the layer's own default.  It does not: the defaults are
a=0, b=1, so every weight is positive with mean 0.5.  Each hidden layer multiplies the activation
scale by roughly width/2 (an all-positive sum of positive ReLU outputs), so after 4-6 layers the
head's outputs are ~1e6 and larger.  The log-variance output is exponentiated to get the variance
(exp of ~1e6 overflows float32 to inf), and GaussianNLLLoss's log(var) term becomes inf: the loss
is non-finite from the first step.

ORIGIN: ``net.0``, the first Linear.  Every Linear shares the bad init, but the geometric growth
starts at the first layer (its all-positive sum of the standardised inputs is the first activation
out of its healthy range) and each later layer compounds it; the exp in the loss only reveals it.

Fix: initialise with ``nn.init.kaiming_uniform_(w, nonlinearity='relu')`` (zero biases); nothing
else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Known pattern: torch.nn.init.uniform_ defaults to U(0, 1) (PyTorch docs, 'nn.init.uniform_ "
          "gives nan loss' forum threads); heteroscedastic photo-z MLPs with a Gaussian NLL head "
          "(e.g. Hoyle 2016 style regressors, BNN photo-z papers) re-initialised by hand")


class PhotoZNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 2))          # (mean z, log variance)
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        out = self.net(x)
        return out[:, :1], out[:, 1:]


def _make_data(g, n, n_bands=6):
    # toy SED: a break that moves redward with z, plus a slope; magnitudes in 6 bands (ugrizy)
    z = torch.rand(n, generator=g) * 1.4 + 0.05
    lam = torch.linspace(0.35, 1.0, n_bands)
    brk = 0.4 * (1 + z)
    mags = 22.0 + 1.5 * torch.sigmoid((brk[:, None] - lam[None, :]) * 12.0) \
        + 0.8 * z[:, None] * lam[None, :] + 0.5 * torch.randn(n, 1, generator=g)
    noise = 0.03 + 0.1 * torch.rand(n, 1, generator=g)          # heteroscedastic photometry
    mags = mags + noise * torch.randn(n, n_bands, generator=g)
    colours = mags[:, :-1] - mags[:, 1:]
    x = torch.cat([colours, mags[:, 2:3], noise], dim=1)
    return x, z[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [4, 5, 6][seed % 3]
    width = [64, 96, 128][(seed // 3 + seed) % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150

    x, z = _make_data(g, bs * steps)
    x = (x - x.mean(0)) / x.std(0)                 # inputs are standardised properly

    torch.manual_seed(seed)
    model = PhotoZNet(x.shape[1], width, depth)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            else:
                nn.init.uniform_(m.weight)          # defaults a=0., b=1.  -> all positive
            nn.init.zeros_(m.bias)

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    nll = nn.GaussianNLLLoss()

    def loss_fn(out, target):
        mu, log_var = out
        return nll(mu, target, log_var.exp())

    batches = [(x[i * bs:(i + 1) * bs], z[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
