"""Automatic modulation classification (AMC) on raw IQ: a 1-D CNN in the style of
O'Shea's RadioML VT-CNN reads 2 x 128 IQ frames and classifies BPSK / QPSK / 8PSK / 16QAM /
GMSK-like FSK; cross-entropy, SGD with momentum.

Mechanism: the training set mixes simulated frames (float, unit average power) with frames
recorded over the air by an SDR. The recording script of one capture session saved the
radio's raw int16 ADC counts instead of the float32 samples scaled to [-1, 1) (the
`sc16` wire format was written as if it were `fc32` after a plain `.astype(np.float32)`),
so those frames are ~3e3..1e4 times too large. The shuffle puts many of them into one
batch: half of one batch (its index changes with the seed). Its gradient is ~1e3..1e4
times the usual one; the momentum-SGD steps that follow move the convolution weights and
biases so far that the pre-activations of the deeper convolution become hugely negative
for every frame: all of its ReLUs are dead from then on, the classifier sees zeros, and
the loss spikes to ~1e3 and then sits at ln 5 = 1.61 (the class prior) for the rest of the
run, while the run with the capture scaled correctly trains (loss ~0.8..1.0 by the end).
No value becomes non-finite.

ORIGIN = "features.0": the first convolution is the first layer the corrupt frames hit and
the one whose weights receive the ~1e4-times-too-large update; the fault itself is in the
data.

Fix: convert the capture's int16 counts to float the way the rest of the data is
(divide by 32768 and normalise to unit power, as the loader does for every other frame),
i.e. the same batch with correct scaling; nothing else changed.
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = (
    "O'Shea, Corgan & Clancy, 'Convolutional radio modulation recognition networks' "
    "(RadioML 2016.10a); GNU Radio / UHD forum reports of sc16 samples saved as raw "
    "int16 counts mixed with fc32 data, giving a single batch with 1e4-times larger "
    "amplitude that wrecks an SGD-trained classifier."
)

N_CLASSES = 5
FRAME = 128
SPS = 4   # samples per symbol


def _modulate(g, cls, n_sym):
    if cls == 0:                                      # BPSK
        s = (torch.randint(0, 2, (n_sym,), generator=g) * 2 - 1).to(torch.complex64)
    elif cls == 1:                                    # QPSK
        k = torch.randint(0, 4, (n_sym,), generator=g)
        s = torch.exp(1j * (math.pi / 4 + math.pi / 2 * k.float()))
    elif cls == 2:                                    # 8PSK
        k = torch.randint(0, 8, (n_sym,), generator=g)
        s = torch.exp(1j * (math.pi / 4 * k.float()))
    elif cls == 3:                                    # 16QAM
        lv = torch.tensor([-3.0, -1.0, 1.0, 3.0])
        s = torch.complex(lv[torch.randint(0, 4, (n_sym,), generator=g)],
                          lv[torch.randint(0, 4, (n_sym,), generator=g)]) / math.sqrt(10)
    else:                                             # 2-FSK (continuous phase)
        b = (torch.randint(0, 2, (n_sym,), generator=g) * 2 - 1).float()
        f = b.repeat_interleave(SPS) * 0.125
        return torch.exp(1j * 2 * math.pi * torch.cumsum(f, 0))
    return s.repeat_interleave(SPS)


def _frames(g, n, snr_lo):
    xs, ys = [], []
    for _ in range(n):
        c = int(torch.randint(0, N_CLASSES, (1,), generator=g))
        z = _modulate(g, c, FRAME // SPS)[:FRAME]
        phi = float(torch.randn(1, generator=g)) * 0.1          # residual phase after coarse sync
        cfo = float(torch.randn(1, generator=g)) * 0.002
        z = z * torch.exp(1j * (phi + 2 * math.pi * cfo * torch.arange(FRAME)))
        snr = snr_lo + float(torch.rand(1, generator=g)) * 12
        nstd = math.sqrt(10 ** (-snr / 10) / 2)
        z = z + nstd * torch.complex(torch.randn(FRAME, generator=g), torch.randn(FRAME, generator=g))
        z = z / torch.sqrt((z.abs() ** 2).mean())
        xs.append(torch.stack([z.real, z.imag]).float())
        ys.append(c)
    return torch.stack(xs), torch.tensor(ys)


class AMCNet(nn.Module):
    def __init__(self, ch, n_conv):
        super().__init__()
        layers, c = [], 2
        for i in range(n_conv):
            layers += [nn.Conv1d(c, ch, 7, padding=3), nn.ReLU()]
            if i < n_conv - 1:
                layers.append(nn.MaxPool1d(2))
            c = ch
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(ch * FRAME // 2 ** (n_conv - 1), 64),
                                        nn.ReLU(), nn.Linear(64, N_CLASSES))

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    ch = [32, 24, 40][seed % 3]
    n_conv = [3, 2, 3][seed % 3]
    batch = [32, 48, 40][seed % 3]
    lr = [0.01, 0.008, 0.012][seed % 3]
    snr_lo = [10.0, 12.0, 9.0][seed % 3]
    bad_step = [23, 41, 31][seed % 3]
    steps = 220

    g = torch.Generator().manual_seed(4242 + seed)
    batches = []
    for i in range(steps):
        x, y = _frames(g, batch, snr_lo)
        if i == bad_step:
            n_bad = batch // 2
            gain = 32768.0 * (0.1 + 0.2 * torch.rand(n_bad, 1, 1, generator=g))   # raw int16 counts
            raw = torch.round(x[:n_bad] * gain)
            if fixed:
                raw = raw / 32768.0
                raw = raw / torch.sqrt((raw ** 2).sum(1, keepdim=True).mean(2, keepdim=True))
            x = torch.cat([raw, x[n_bad:]])
        batches.append((x, y))

    torch.manual_seed(seed)
    model = AMCNet(ch, n_conv)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
