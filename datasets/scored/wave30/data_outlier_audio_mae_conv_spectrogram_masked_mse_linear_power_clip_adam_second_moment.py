"""Audio-MAE-style masked spectrogram modelling: a small conv encoder/decoder reconstructs
masked 4x4 time-frequency patches of standardised log-mel clips (MSE on the masked patches
only), Adam.

Mechanism: the feature cache is clean except for one or two clips in one early batch (the
step depends on the seed) that were written before the ``log`` step of the feature
pipeline: linear mel power, values up to ~1e6-1e7 instead of ~N(0, 1).  The masked MSE on
that batch is ~1e10-1e12 and every parameter gets a gradient 1e4-1e6 times its normal size.  Adam
stores that gradient in its second-moment estimate v (beta2 = 0.999, so it decays over
thousands of steps); for the rest of the run every update is m / sqrt(v) ~ 1e-4 of its normal
size.  The model is effectively frozen where it was when the bad clip arrived, and the loss
stays at its early level (no inf/NaN anywhere - just a flat curve).

ORIGIN: ``encoder.0`` - the first convolution is the first module the corrupt clip reaches;
no module is faulty, the data is the root (the huge gradients then reach every layer).

Fix: filter the batch - drop clips whose values are not in a plausible standardised range
(|x| > 50), i.e. the sanity check the loader should have had.  Same model, optimiser and
steps otherwise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("Audio-MAE / SSAST style masked spectrogram pretraining; reports of training "
          "'freezing' after a single corrupt (non-log, linear power) clip in the feature cache "
          "inflating Adam's second-moment estimate")


class ConvMAE(nn.Module):
    def __init__(self, c, depth):
        super().__init__()
        enc = [nn.Conv2d(1, c, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 1):
            enc += [nn.Conv2d(c, c, 3, padding=1), nn.ReLU()]
        self.encoder = nn.Sequential(*enc)
        self.decoder = nn.Sequential(nn.Conv2d(c, c, 3, padding=2, dilation=2), nn.ReLU(),
                                     nn.Conv2d(c, 1, 3, padding=1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def masked_mse(out, y):
    target, mask = y[:, :1], y[:, 1:]
    return ((out - target) ** 2 * mask).sum() / mask.sum().clamp_min(1.0)


def _logmel(g, bs, F_, T):
    f = torch.arange(F_).float().view(1, F_, 1)
    t = torch.arange(T).float().view(1, 1, T)
    pitch = 2 + (F_ - 6) * torch.rand(bs, 1, 1, generator=g)
    rate = 0.1 + 0.3 * torch.rand(bs, 1, 1, generator=g)
    ph = 6.28 * torch.rand(bs, 1, 1, generator=g)
    harm = torch.exp(-(f - pitch) ** 2 / 2) + 0.6 * torch.exp(-(f - 2 * pitch) ** 2 / 3)
    env = 0.6 + 0.4 * torch.sin(rate * t + ph)
    x = 3.0 * harm * env + 0.3 * torch.randn(bs, F_, T, generator=g)
    return (x - 0.5) / 0.9


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [16, 24, 20][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [24, 16, 32][seed % 3]
    lr = [1e-3, 7e-4, 1.5e-3][seed % 3]
    ratio = [0.6, 0.7, 0.5][seed % 3]
    steps = 150
    F_, T = 16, 32
    bad_step = [6, 8, 7][seed % 3] + seed // 3
    batches = []
    for step in range(steps):
        x = _logmel(g, bs, F_, T)
        if step == bad_step:
            n_bad = 1 + seed % 2
            x[:n_bad] = torch.exp(3.0 * x[:n_bad] + 6.0)     # linear power, log skipped
        patch = (torch.rand(bs, 1, F_ // 4, T // 4, generator=g) < ratio).float()
        mask = patch.repeat_interleave(4, 2).repeat_interleave(4, 3)
        inp = x.unsqueeze(1) * (1 - mask)
        y = torch.cat([x.unsqueeze(1), mask], 1)
        if fixed:
            ok = x.flatten(1).abs().amax(1) < 50
            inp, y = inp[ok], y[ok]
        batches.append((inp, y))
    model = ConvMAE(c, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=masked_mse, batches=batches, steps=steps)
