"""SuperNNova / RAPID-style recurrent supernova light-curve classifier (LSTM over the
sequence of photometric observations, features = time, flux, flux error, passband one-hot;
classes Ia / Ibc / II), where the time feature is the raw Modified Julian Date.

Mechanism
---------
Fluxes were normalised per light curve, but the time column was passed as the absolute
MJD (~58000-60500) instead of the time since first detection.  Every LSTM gate's input
pre-activation contains w_t * MJD with |w_t| drawn up to 1/sqrt(hidden) ~ 0.14-0.2, i.e.
typically +-1e3-1e4 (median ~5e3), with the same sign for every observation of every
object.  Virtually all input, forget and output sigmoids and the cell tanh (>99.5% of
gate units) are pinned at exactly 0/1 (+-1) in float32, their derivatives are zero
and the hidden state follows the same trajectory for every light curve.  The classifier
head only learns the (balanced) class prior and the cross-entropy stays at
~ln(3) for the whole run.

ORIGIN
------
``lstm``: the recurrent layer whose gate nonlinearities saturate on the raw MJD input.

Fix
---
Feed time since first observation in units of 100 days ((mjd - mjd[0]) / 100), as
SuperNNova's ``delta_time`` feature; same model, optimiser and batches otherwise.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "lstm"
SOURCE = ("SuperNNova (Moller & de Boissiere 2020) / RAPID (Muthukrishna et al. 2019) "
          "recurrent light-curve classifiers; raw MJD passed as the time feature")

BANDS = 4


def _bazin(t, t0, trise, tfall, amp):
    return amp * torch.exp(-(t - t0) / tfall) / (1 + torch.exp(-(t - t0) / trise))


def _lightcurves(g, B, n_obs):
    cls = torch.randint(0, 3, (B,), generator=g)
    trise = torch.tensor([2.0, 1.5, 4.0])[cls] * (0.8 + 0.4 * torch.rand(B, generator=g))
    tfall = torch.tensor([25.0, 18.0, 70.0])[cls] * (0.8 + 0.4 * torch.rand(B, generator=g))
    colour = torch.tensor([[1.0, 0.9, 0.7, 0.5], [0.7, 0.9, 1.0, 0.9], [0.9, 1.0, 0.9, 0.8]])[cls]
    start = 58000.0 + 2500.0 * torch.rand(B, 1, generator=g)
    gaps = 1.0 + 5.0 * torch.rand(B, n_obs, generator=g)
    mjd = start + torch.cumsum(gaps, 1)
    peak = start + 20.0 + 20.0 * torch.rand(B, 1, generator=g)
    band = torch.randint(0, BANDS, (B, n_obs), generator=g)
    flux = _bazin(mjd - start, peak - start, trise[:, None], tfall[:, None], 1.0)
    flux = flux * torch.gather(colour, 1, band)
    err = 0.03 + 0.03 * torch.rand(B, n_obs, generator=g)
    flux = flux + err * torch.randn(B, n_obs, generator=g)
    norm = flux.abs().amax(1, keepdim=True)
    return mjd, flux / norm, err / norm, band, cls


class LightCurveLSTM(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(3 + BANDS, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out.mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=32, layers=1, n_obs=30, B=64, lr=3e-3, steps=100),
           dict(hidden=48, layers=2, n_obs=24, B=48, lr=2e-3, steps=90),
           dict(hidden=24, layers=1, n_obs=40, B=96, lr=5e-3, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1987 + seed)
    model = LightCurveLSTM(cfg["hidden"], cfg["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        mjd, flux, err, band, cls = _lightcurves(g, cfg["B"], cfg["n_obs"])
        t = (mjd - mjd[:, :1]) / 100.0 if fixed else mjd    # BUG: absolute MJD
        x = torch.cat([t.unsqueeze(-1), flux.unsqueeze(-1), err.unsqueeze(-1),
                       nn.functional.one_hot(band, BANDS).float()], dim=-1)
        batches.append((x, cls))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
