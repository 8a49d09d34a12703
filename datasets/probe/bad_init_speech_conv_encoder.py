"""wav2vec2-style strided Conv1d feature encoder for keyword spotting, with N(0, 1) conv weights.

Architecture: the raw-waveform feature extractor of wav2vec 2.0 / HuBERT (a stack of strided
Conv1d layers, kernels (10, 3, 3, ...), strides (5, 2, 2, ...), GELU, no normalisation in this
"layer-free" variant), then a feature projection, mean pooling over frames and a linear keyword
classifier.  The data are synthetic one-second "keywords": each class is a pair of tones with a
class-specific frequency sweep, random gain, phase and onset, plus background noise, each
utterance normalised to zero mean and unit variance (Wav2Vec2FeatureExtractor, do_normalize=True).

Mechanism: the model's `_init_weights` (copied from a tutorial that initialises embeddings) calls
`nn.init.normal_(m.weight)` on every Conv1d, i.e. std = 1.0 instead of the He/Kaiming std
sqrt(2 / fan_in).  With fan_in = C * k (about 100) each conv multiplies the activation scale by
roughly 5-8x, so the scale grows geometrically with depth from the very first forward pass
(activation std about 2, 12, 60, 300, 1e3, 6e3, ... layer by layer); the logits have a std of
4e3-1e5, the cross-entropy is in the thousands, and the first optimizer steps (SGD with
momentum, the usual recipe for small KWS models) throw the weights further out until the loss is
inf/NaN at step 2-3.  This is the pattern
of the many "loss is NaN right after my custom weight init" reports and the geometric-growth
argument of He et al. (2015).

ORIGIN: `feature_extractor.0.conv`, the first conv layer whose weights are badly initialised
(every conv is N(0, 1); the growth starts at the first one).

fixed=True: the convs get Kaiming-normal init (fan_in, GELU ~ relu gain), as the wav2vec2 code
does.  Everything else (data, lr, optimizer, depth, widths) is identical.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "feature_extractor.0.conv"
SOURCE = ("wav2vec2/HuBERT strided conv feature encoder; custom _init_weights using "
          "nn.init.normal_(w) (std=1) instead of kaiming_normal_ - 'NaN loss after custom "
          "weight init' forum reports; He et al. 2015 geometric activation growth")


class ConvLayer(nn.Module):
    def __init__(self, cin, cout, k, s):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, stride=s, bias=False)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.conv(x))


class SpeechEncoderKWS(nn.Module):
    def __init__(self, dim, kernels, strides, hidden, n_classes):
        super().__init__()
        layers, cin = [], 1
        for k, s in zip(kernels, strides):
            layers.append(ConvLayer(cin, dim, k, s))
            cin = dim
        self.feature_extractor = nn.ModuleList(layers)
        self.feature_projection = nn.Linear(dim, hidden)
        self.classifier = nn.Linear(hidden, n_classes)

    def forward(self, wav):
        h = wav.unsqueeze(1)
        for layer in self.feature_extractor:
            h = layer(h)
        h = self.feature_projection(h.transpose(1, 2))   # (B, frames, hidden)
        return self.classifier(h.mean(1))


def _init_weights(model, fixed):
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)          # the bug: std = 1.0
        elif isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)


def _make_batches(g, steps, bs, n_classes, length, sr):
    t = torch.arange(length, dtype=torch.float32) / sr
    f0 = 120.0 + 55.0 * torch.arange(n_classes, dtype=torch.float32)
    sweep = torch.linspace(-40.0, 60.0, n_classes)[torch.randperm(n_classes, generator=g)]
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_classes, (bs,), generator=g)
        gain = 0.05 + 0.25 * torch.rand(bs, 1, generator=g)
        phase = 2 * math.pi * torch.rand(bs, 1, generator=g)
        onset = (torch.rand(bs, 1, generator=g) * 0.3)
        env = torch.sigmoid((t[None] - onset) * 40.0) * torch.sigmoid((onset + 0.6 - t[None]) * 40.0)
        freq = f0[y][:, None] + sweep[y][:, None] * t[None]
        wav = gain * env * (torch.sin(2 * math.pi * freq * t[None] + phase)
                            + 0.5 * torch.sin(4 * math.pi * freq * t[None]))
        wav = wav + 0.02 * torch.randn(bs, length, generator=g)
        # per-utterance zero-mean / unit-variance, as Wav2Vec2FeatureExtractor(do_normalize=True)
        wav = (wav - wav.mean(1, keepdim=True)) / (wav.std(1, keepdim=True) + 1e-7)
        batches.append((wav, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    dim = (24, 32, 40)[seed % 3]
    depth = (6, 7, 6)[seed % 3]
    kernels = [10] + [3] * (depth - 3) + [2, 2]
    strides = [5] + [2] * (depth - 1)
    n_classes = 8
    steps = 80 + 20 * seed
    bs = (16, 12, 20)[seed % 3]
    lr = (0.01, 0.008, 0.012)[seed % 3]
    model = SpeechEncoderKWS(dim, kernels, strides, 64, n_classes)
    _init_weights(model, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = _make_batches(g, steps, bs, n_classes, 3200, 3200.0)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
