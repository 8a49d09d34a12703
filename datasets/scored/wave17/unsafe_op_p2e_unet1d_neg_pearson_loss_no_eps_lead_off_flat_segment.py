"""PPG-to-ECG reconstruction 1D U-Net (P2E-style encoder/decoder with skip connections) trained
with the negative-Pearson loss popular in rPPG/biosignal work (PhysNet): 1 - corr(pred, target)
per window, averaged over the batch, Adam.

Mechanism: the loss divides the covariance by std(pred) * std(target) with no epsilon. Training is
calm until a batch contains a window recorded while an ECG electrode was off (lead-off: the ADC
holds a constant value). For that window target - mean(target) == 0, so the correlation is 0/0 =
NaN, the batch loss is NaN and the NaN gradient wipes out every weight. ORIGIN is None: the unsafe
op is in the loss function, not in a module. Fix: eps in the denominator
(sqrt(var_p * var_t + 1e-8)), which gives the flat window a finite loss of 1.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "PhysNet negative Pearson loss (Yu et al. 2019) reused for PPG-to-ECG; 0/0 on a constant lead-off ECG window"

T = 256


class UNet1D(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv1d(1, c, 7, padding=3), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv1d(c, 2 * c, 7, padding=3, stride=2), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv1d(2 * c, 4 * c, 7, padding=3, stride=2), nn.ReLU())
        self.d2 = nn.Sequential(nn.ConvTranspose1d(4 * c, 2 * c, 4, stride=2, padding=1), nn.ReLU())
        self.d1 = nn.Sequential(nn.ConvTranspose1d(4 * c, c, 4, stride=2, padding=1), nn.ReLU())
        self.out = nn.Conv1d(2 * c, 1, 7, padding=3)

    def forward(self, x):
        a = self.e1(x); b = self.e2(a); c = self.e3(b)
        d = self.d2(c)
        d = self.d1(torch.cat([d, b], 1))
        return self.out(torch.cat([d, a], 1)).squeeze(1)


def _batch(g, n, lead_off):
    hr = 50 + 60 * torch.rand(n, 1, generator=g)
    t = torch.arange(T).float() / 64.0
    ph = torch.rand(n, 1, generator=g)
    cyc = torch.remainder(t * hr / 60 + ph, 1.0)
    ecg = torch.exp(-0.5 * ((cyc - 0.3) / 0.02) ** 2) + 0.15 * torch.exp(-0.5 * ((cyc - 0.6) / 0.06) ** 2)
    ppg = torch.exp(-0.5 * ((torch.remainder(cyc - 0.12, 1.0) - 0.45) / 0.12) ** 2)  # delayed, smoothed pulse
    ppg = ppg + 0.05 * torch.randn(n, T, generator=g)
    if lead_off:
        ecg[int(torch.randint(0, n, (1,), generator=g))] = 0.5  # constant ADC value, electrode off
    return ppg.unsqueeze(1), ecg


def make_loss(eps):
    def neg_pearson(pred, target):
        p = pred - pred.mean(-1, keepdim=True)
        t = target - target.mean(-1, keepdim=True)
        corr = (p * t).sum(-1) / torch.sqrt((p * p).sum(-1) * (t * t).sum(-1) + eps)
        return (1 - corr).mean()
    return neg_pearson


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [8, 12, 16][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [16, 8, 32][seed % 3]
    bad_step = [31, 47, 66][seed % 3]
    steps = 80
    model = UNet1D(c)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, bs, i == bad_step) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1e-8 if fixed else 0.0), batches=batches, steps=steps)
