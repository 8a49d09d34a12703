"""Predominant-instrument classifier (8 classes, IRMAS-style 3 s excerpts) with a small 2-D CNN on
log-mel patches, cross-entropy, Adam.

Mechanism: the feature cache was built by decoding every mp3 and computing log-mels; for one
truncated/corrupt file the decoder returned NaN samples after the break (a known behaviour of
some mp3 back-ends when a frame header is damaged), so the cached log-mel for that excerpt has
NaN frames. The loader does not check the cache. When the shuffled order puts that excerpt in a
batch (a seed-dependent step), the conv output, the logits and the loss of the whole batch become
NaN, and the Adam step writes NaN into every weight.

ORIGIN: `features.0`, the first conv layer - the first module the corrupt batch goes through
(the fault is in the data, not in any layer; this is where it enters the model).

Fix: filter the batch - the loader drops excerpts whose features are not all finite (the rest of
the batch, the model and the schedule are unchanged).
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = ("Corrupt/truncated audio files yielding NaN features in cached spectrogram datasets "
          "(recurring reports on librosa/torchaudio issue trackers and IRMAS/FMA pipelines: "
          "'loss becomes nan after N iterations' traced to one bad file); IRMAS-style CNN after "
          "Han et al. 2017.")


class InstrumentCNN(nn.Module):
    def __init__(self, width, n_cls=8):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(2 * width, n_cls)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def _batch(g, B, templates):
    y = torch.randint(0, 8, (B,), generator=g)
    t = torch.arange(32).float()
    env = torch.exp(-t[None, :] / (4 + 20 * torch.rand(B, 1, generator=g)))
    spec = templates[y][:, :, None] * env[:, None, :]
    spec = spec + 0.05 * torch.rand(B, 32, 32, generator=g)
    logmel = torch.log(spec + 1e-3)
    logmel = (logmel + 3.0) / 2.5
    return logmel.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    width = [8, 12, 16][seed % 3]
    lr = [2e-3, 3e-3, 1e-3][seed % 3]
    B = [16, 24, 32][seed % 3]
    steps = 80
    bad_step = [23, 41, 57][seed % 3]
    torch.manual_seed(seed)
    model = InstrumentCNN(width)
    templates = torch.rand(8, 32, generator=g) ** 3 + 0.05
    batches = []
    for s in range(steps):
        x, y = _batch(g, B, templates)
        if s == bad_step:
            j = int(torch.randint(0, B, (1,), generator=g))
            cut = int(torch.randint(8, 24, (1,), generator=g))
            x[j, 0, :, cut:] = float("nan")  # decoder returned NaN after the damaged frame
        if fixed:
            ok = torch.isfinite(x).flatten(1).all(1)
            x, y = x[ok], y[ok]
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
