"""MLP-Mixer keyword classifier on log-mel spectrograms, trained with SGD at a
learning rate copied from a large-batch ImageNet recipe.

Mechanism
---------
The Mixer treats each spectrogram frame as a token (tokens = time frames,
channels = mel bins projected to d) and alternates token-mixing and
channel-mixing MLPs with pre-LayerNorm and residual connections.  The recipe
uses SGD + Nesterov momentum 0.9 with a base lr scaled for batch 4096
(linear-scaling rule), but the run uses a batch of 32 and no warmup.  From the
very first steps each update is a large fraction of the weight itself
(update/weight ratios of 1e-1..1 instead of ~1e-3): the residual stream and the
classifier logits grow step after step, the cross-entropy overshoots to huge
values and, within a few dozen steps, the loss (and then the weights) become
inf/NaN.

Fix
---
Use a learning rate appropriate for the actual batch size (here 50x lower).
Same model, data, momentum and steps; the run trains smoothly.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goyal et al. 2017 linear-scaling rule misapplied (base lr for batch 4096 "
          "used with a small batch, no warmup); common 'loss becomes NaN after a few "
          "iterations, lowering the lr fixes it' reports on PyTorch forums; "
          "Tolstikhin et al. 2021 MLP-Mixer (trained with warmup + tuned lr)")


class MixerBlock(nn.Module):
    def __init__(self, n_tok, d, tok_hid, ch_hid):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.token_mlp = nn.Sequential(nn.Linear(n_tok, tok_hid), nn.GELU(), nn.Linear(tok_hid, n_tok))
        self.norm2 = nn.LayerNorm(d)
        self.channel_mlp = nn.Sequential(nn.Linear(d, ch_hid), nn.GELU(), nn.Linear(ch_hid, d))

    def forward(self, x):  # x: (B, T, d)
        y = self.norm1(x).transpose(1, 2)
        x = x + self.token_mlp(y).transpose(1, 2)
        x = x + self.channel_mlp(self.norm2(x))
        return x


class AudioMixer(nn.Module):
    def __init__(self, n_mels, n_frames, d, depth, n_cls):
        super().__init__()
        self.stem = nn.Linear(n_mels, d)
        self.blocks = nn.Sequential(*[MixerBlock(n_frames, d, 2 * n_frames, 2 * d) for _ in range(depth)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_cls)

    def forward(self, spec):  # spec: (B, T, n_mels)
        h = self.blocks(self.stem(spec))
        return self.head(self.norm(h).mean(1))


def _templates(g, n_cls, n_frames, n_mels):
    """Each keyword = a few chirps (formant tracks) on the mel/time plane."""
    t = torch.arange(n_frames).float()
    f = torch.arange(n_mels).float()
    temps = []
    for _ in range(n_cls):
        img = torch.zeros(n_frames, n_mels)
        for _ in range(3):
            f0 = torch.rand(1, generator=g).item() * n_mels
            slope = (torch.rand(1, generator=g).item() - 0.5) * 0.8
            track = f0 + slope * t
            img += torch.exp(-0.5 * ((f[None, :] - track[:, None]) / 1.5) ** 2)
        temps.append(img)
    return torch.stack(temps)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    n_mels = [32, 40, 32][seed % 3]
    n_frames = [32, 24, 40][seed % 3]
    d = [64, 48, 64][seed % 3]
    depth = [3, 4, 3][seed % 3]
    n_cls = 6
    B = 32
    steps = 150
    good_lr = [0.05, 0.04, 0.05][seed % 3]
    lr = good_lr if fixed else good_lr * 50  # linear-scaling lr for batch 4096 (bug)

    temps = _templates(g, n_cls, n_frames, n_mels)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (B,), generator=g)
        shift = torch.randint(-3, 4, (B,), generator=g)
        x = torch.stack([torch.roll(temps[c], int(s), dims=0) for c, s in zip(y.tolist(), shift.tolist())])
        x = x + 0.5 * torch.randn(x.shape, generator=g)
        x = (x - 0.3) / 0.6  # per-dataset standardisation of the log-mel features
        batches.append((x, y))

    model = AudioMixer(n_mels, n_frames, d, depth, n_cls)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
