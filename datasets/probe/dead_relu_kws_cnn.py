"""Keyword-spotting CNN (two Conv-ReLU-MaxPool blocks + a ReLU MLP head) on log-mel-like spectrograms,
trained with SGD(momentum=0.9) at lr=0.085.  The net learns first (loss well below 0.5), but the large
momentum steps keep pushing the second conv's filters (fed by non-negative post-ReLU maps) below zero, so
features.4 channels die one after another; a loss spike between steps ~40 and ~160 kills (almost) all of
them and most head units with them, no gradient reaches the convs and the loss sits at ln(10) = 2.30.
fixed=True: the setting that killed the units is corrected, lr 0.085 -> 0.02 (same momentum, model, data).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("CS231n notes 'dying ReLU' (a large gradient/update knocks ReLU units into a region where they never "
          "activate again; common with too high a learning rate) and the many 'loss stuck at ln(num_classes) "
          "after training fine for a while' keyword-spotting/audio CNN forum reports")

N_MELS, N_FRAMES, N_CLASSES = 40, 32, 10


def make_templates(gen):
    # each keyword: 3 "syllables", each a few harmonically spaced formant ridges over a time segment
    temps = torch.zeros(N_CLASSES, N_MELS, N_FRAMES)
    for c in range(N_CLASSES):
        t0 = 2
        for _ in range(3):
            dur = int(torch.randint(4, 8, (1,), generator=gen))
            f0 = int(torch.randint(2, 14, (1,), generator=gen))
            for h in range(1, 4):
                f = f0 * h
                if f < N_MELS:
                    temps[c, f, t0:t0 + dur] += 1.0 / h
                    if f + 1 < N_MELS:
                        temps[c, f + 1, t0:t0 + dur] += 0.5 / h
            t0 += dur + 1
    return temps


def make_batches(gen, temps, steps, bs):
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (bs,), generator=gen)
        shift = torch.randint(-3, 4, (bs,), generator=gen)
        x = torch.stack([torch.roll(temps[c], int(s), dims=1) for c, s in zip(y.tolist(), shift.tolist())])
        x = x * (0.7 + 0.6 * torch.rand(bs, 1, 1, generator=gen))      # loudness jitter
        x = x + 0.3 * torch.randn(bs, N_MELS, N_FRAMES, generator=gen)  # background noise
        x = (x - 0.1) / 0.45                                            # standardised log-mel energies
        batches.append((x.unsqueeze(1), y))
    return batches


class KWSNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 10 * 8, 64), nn.ReLU(), nn.Linear(64, N_CLASSES))

    def forward(self, x):
        return self.head(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    temps = make_templates(torch.Generator().manual_seed(7))
    steps = 200
    batches = make_batches(gen, temps, steps, 32)
    model = KWSNet()
    lr = 0.02 if fixed else 0.085
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
