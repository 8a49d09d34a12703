"""Frame-wise piano transcription ConvNet (Kelz et al. 2016 'ConvNet': conv-conv-pool-conv-pool
-> dense -> 88 sigmoid outputs) on globally standardised power spectrogram context
windows, BCE with logits, SGD+momentum, no batch norm.

Mechanism: one file of the corpus is 32-bit PCM, but the loader divides every file by 32768
(int16 full scale), so that clip is ~65536x too loud. The batch that contains it has power features
~4e9x too large; its gradient is enormous, the single SGD step it causes throws the weights
far off and the next forwards overflow (inf/NaN loss). Training was healthy until then.
ORIGIN is None: a corrupt batch, not a module. Fix: that file scaled by its true full scale
(2**31), i.e. the outlier batch brought back to the normal range.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Kelz et al. 2016 frame-wise piano transcription ConvNet; int32 PCM file normalised by int16 full scale"

N_BINS, N_KEYS, CTX = 48, 16, 5


def _batch(g, n, gain):
    roll = (torch.rand(n, N_KEYS, generator=g) < 0.15).float()
    key_bin = torch.arange(N_KEYS) * 3
    spec = 0.1 * torch.rand(n, CTX, N_BINS, generator=g)
    spec[..., key_bin] += roll.unsqueeze(1)
    spec[..., (key_bin + 12).clamp(max=N_BINS - 1)] += 0.5 * roll.unsqueeze(1)
    x = ((spec * gain) ** 2 - 0.2) / 0.3  # power spectrogram, global dataset mean/std standardisation
    return x.unsqueeze(1), roll


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, h = [(16, 64), (24, 96), (12, 48)][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    bs = [32, 24, 48][seed % 3]
    bad_step = [25, 40, 60][seed % 3]
    steps = 100
    model = nn.Sequential(
        nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
        nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d((1, 2)),
        nn.Conv2d(c, 2 * c, 3), nn.ReLU(), nn.MaxPool2d((1, 2)),
        nn.Flatten(), nn.Linear(2 * c * (CTX - 2) * ((N_BINS // 2 - 2) // 2), h), nn.ReLU(),
        nn.Linear(h, N_KEYS))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_batch(g, bs, 1.0 if (i != bad_step or fixed) else 65536.0) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
