"""SSVEP speller (a speech-free BCI text-entry method): each on-screen key flickers at its own
frequency; a small CNN (Ravi et al. style) takes the FFT magnitude spectrum of a 1 s occipital EEG
window (electrodes x frequency bins, non-negative) and classifies which of K keys the user is
looking at. Conv over electrodes -> ReLU -> conv over frequency -> ReLU -> linear, cross-entropy,
Adagrad.

Mechanism: the optimiser line was copied from the team's sparse click-through-rate recipe,
Adagrad(lr=1.0), a normal value for sparse embeddings. For dense weights Adagrad's first update is
lr * g / |g|: every weight and bias moves by ~1.0, ~10x its initial scale, in the sign of its
gradient. Because the spectra are non-negative, all incoming weights of a hidden unit share the
sign of that unit's back-propagated error, so about half the units get all weights and the bias
pushed down by 1.0 and output exactly 0 for every spectrum from then on; the remaining units blow
up the logits, receive large errors and die in the next few steps the same way. With the ReLUs
dead no gradient reaches the convolutions and the loss returns to ln K: a stall.

ORIGIN: "spatial_relu", the first ReLU, where units first stop passing signal and gradient.

Fix: Adagrad lr 0.01 (the rate the recipe uses for its dense tower); model, data, steps unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "spatial_relu"
SOURCE = ("Dying ReLU after an oversized first update (CS231n notes: 'as much as 40% of your network "
          "can be dead' with a too-high learning rate); Adagrad lr=1.0 from sparse CTR recipes "
          "reused on dense nets; Ravi et al. 2020 J. Neural Eng. CNN on SSVEP magnitude spectra")

N_CH, N_BINS = 8, 48  # O1/Oz/O2/PO3/POz/PO4/PO7/PO8, 3..26.5 Hz at 0.5 Hz resolution


class SsvepCNN(nn.Module):
    def __init__(self, n_keys, f_sp, f_fr):
        super().__init__()
        self.spatial = nn.Conv2d(1, f_sp, (N_CH, 1))
        self.spatial_relu = nn.ReLU()
        self.spectral = nn.Conv2d(f_sp, f_fr, (1, 9), stride=(1, 3))
        self.spectral_relu = nn.ReLU()
        self.out = nn.Linear(f_fr * ((N_BINS - 9) // 3 + 1), n_keys)

    def forward(self, x):
        h = self.spatial_relu(self.spatial(x))
        h = self.spectral_relu(self.spectral(h))
        return self.out(h.flatten(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_keys = [8, 12, 10][seed % 3]
    f_sp = [16, 12, 24][seed % 3]
    f_fr = [16, 24, 16][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 150
    lr = 0.01 if fixed else [1.0, 0.7, 1.5][seed % 3]
    n = steps * bs
    freqs = 3 + 0.5 * torch.arange(N_BINS).float()
    stim = torch.linspace(8.0, 15.0, n_keys)  # key flicker frequencies
    y = torch.randint(0, n_keys, (n,), generator=g)
    f0 = stim[y].view(n, 1, 1)
    # 1/f background + SSVEP peaks at f0 and 2*f0, stronger on occipital midline channels
    gain = torch.tensor([0.7, 1.0, 0.7, 0.5, 0.8, 0.5, 0.3, 0.3]).view(1, N_CH, 1)
    snr = 0.6 + 0.5 * torch.rand(n, 1, 1, generator=g)
    peaks = torch.exp(-((freqs - f0) / 0.35) ** 2) + 0.5 * torch.exp(-((freqs - 2 * f0) / 0.35) ** 2)
    bg = 3.0 / freqs.view(1, 1, -1)
    power = bg * (0.5 + torch.rand(n, N_CH, N_BINS, generator=g)) + snr * gain * peaks
    mag = torch.sqrt(power)  # magnitude spectrum, >= 0
    x = (mag / mag.mean()).unsqueeze(1)  # global scaling only: the spectra stay non-negative
    torch.manual_seed(seed)
    model = SsvepCNN(n_keys, f_sp, f_fr)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
