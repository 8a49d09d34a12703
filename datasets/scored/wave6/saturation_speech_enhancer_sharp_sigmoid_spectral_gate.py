"""A single-channel speech-enhancement front-end predicts a time-frequency gain mask from
log-magnitude frames (+-2 frames of context) and applies it to the noisy magnitude (magnitude MSE
against the clean spectrum, SGD with momentum). To make the mask "almost binary" like a classic
spectral noise gate, the gate is written as sigmoid(slope * z) with slope = 40 (a hard-threshold
approximation copied from a DSP noise-gate design). With default-initialised heads z spans about
+-0.3, so slope * z is already beyond +-8 for a third of the gates at step 0; the few gates near the
threshold get a 40x amplified gradient, overshoot, and within a few dozen steps every gate is
pinned at 0 or 1 with |slope*z| in the hundreds, where sigmoid' is zero in float32. The loss then
sits on a plateau above its early value. The fix uses a unit slope (slope = 1), i.e. smaller
pre-activations into the sigmoid; data, lr and optimiser are identical.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "gate"
SOURCE = ("Known pattern: 'temperature'/slope-sharpened sigmoid masks (soft noise gates, binary-mask "
          "approximations) saturate and stop learning; cf. discussions of steep sigmoid gating in "
          "speech-enhancement mask estimation (IRM vs IBM training).")

F = 32      # frequency bins
CTX = 2     # context frames each side


class SharpGate(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope

    def forward(self, z):
        return torch.sigmoid(self.slope * z)


class MaskEstimator(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.enc = nn.Linear(F * (2 * CTX + 1), 96)
        self.act = nn.ReLU()
        self.mid = nn.Linear(96, 96)
        self.act2 = nn.ReLU()
        self.mask_head = nn.Linear(96, F)
        self.gate = SharpGate(slope)

    def forward(self, logmag_ctx, noisy_mag):
        h = self.act(self.enc(logmag_ctx))
        h = self.act2(self.mid(h))
        m = self.gate(self.mask_head(h))
        return m * noisy_mag


def _make_batch(g, B):
    # clean: harmonic-ish spectra with a random f0 and spectral tilt; noise: coloured stationary
    k = torch.arange(F, dtype=torch.float32)
    T = 2 * CTX + 1
    f0 = 2.0 + 4.0 * torch.rand(B, 1, 1, generator=g)
    amp = torch.rand(B, 1, 1, generator=g) * 2 + 0.5
    harm = torch.relu(torch.cos(2 * math.pi * k.view(1, 1, F) / f0)) ** 4
    tilt = torch.exp(-k.view(1, 1, F) / (8 + 8 * torch.rand(B, 1, 1, generator=g)))
    clean = amp * harm * tilt * (0.7 + 0.3 * torch.rand(B, T, F, generator=g))
    noise_lvl = 0.2 + 0.6 * torch.rand(B, 1, 1, generator=g)
    noise = noise_lvl * torch.rand(B, T, F, generator=g) * torch.exp(-k.view(1, 1, F) / 20)
    noisy = clean + noise
    logmag = torch.log(noisy + 1e-3)
    x_ctx = logmag.reshape(B, T * F)
    centre = CTX
    return (x_ctx, noisy[:, centre, :].contiguous()), clean[:, centre, :].contiguous()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = MaskEstimator(slope=1.0 if fixed else 40.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    steps = 150
    pool = [_make_batch(g, 64) for _ in range(30)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(est, clean):
        return ((est - clean) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
