"""RAPID-style GRU transient light-curve classifier (Muthukumar et al. 2019) with one chunk of -99 "missing magnitude" sentinels.

Mechanism: light curves are converted from magnitudes to normalised fluxes, flux = 10**(-0.4*(mag - zp)),
before being fed to the GRU. One survey chunk stores non-detections with the catalogue's -99
"missing" sentinel instead of forced photometry; the conversion gives 10**49.6, which is inf in
float32. The batch that contains these epochs drives the input projection to inf/NaN, the loss is
NaN at that step and Adam's moments carry NaN into every weight afterwards.

ORIGIN: None (one corrupt batch, not a module).
Fix: that batch replaced by clean forced-photometry values (sentinel rows filtered), same model,
optimiser and order.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "RAPID (Muthukumar et al. 2019, PASP) GRU light-curve classifier; survey catalogues using -99/-999 magnitude sentinels for missing photometry"


class RapidGRU(nn.Module):
    def __init__(self, nin, hidden, ncls):
        super().__init__()
        self.inp = nn.Linear(nin, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, ncls)

    def forward(self, x):
        o, _ = self.gru(torch.relu(self.inp(x)))
        return self.head(o[:, -1])


def _lcs(g, b, T, ncls):
    cls = torch.randint(0, ncls, (b,), generator=g)
    t = torch.linspace(0, 1, T)[None, :]
    rise = (0.05 + 0.1 * cls.float())[:, None]
    decay = (0.03 + 0.3 * (ncls - 1 - cls).float() / ncls)[:, None]
    peak = 0.3 + 0.1 * torch.rand(b, 1, generator=g)
    f = torch.exp(-(t - peak).clamp(min=0) / decay) * torch.sigmoid((t - peak + 0.1) / (rise * 0.3))
    g_band = f + 0.05 * torch.randn(b, T, generator=g)
    r_band = f * (0.3 + 1.0 * cls.float()[:, None] / ncls) + 0.05 * torch.randn(b, T, generator=g)
    x = torch.stack([g_band, r_band, t.expand(b, T)], -1)
    return x, cls


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 24, 40][seed % 3]
    T = [40, 30, 50][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [80, 70, 90][seed % 3]
    lr = [3e-3, 4e-3, 3e-3][seed % 3]
    bad_step = [40, 25, 55][seed % 3]
    ncls = 4
    batches = [_lcs(g, bs, T, ncls) for _ in range(steps)]
    if not fixed:
        x, y = batches[bad_step]
        x = x.clone()
        nd = torch.rand(bs, T, generator=g) < 0.5
        # this chunk stores magnitudes with the -99 "missing" sentinel; the flux conversion
        # 10**(-0.4 * (mag - zp)) turns them into 10**49.6 -> inf in float32
        zp = 25.0
        sentinel_flux = torch.pow(torch.tensor(10.0), -0.4 * (torch.tensor(-99.0) - zp)) / torch.tensor(1e4)
        x[..., 0][nd] = sentinel_flux
        x[..., 1][nd] = sentinel_flux
        batches[bad_step] = (x, y)
    model = RapidGRU(3, hidden, ncls)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
