"""M5-style raw-waveform keyword classifier (Dai et al. 2017: a wide strided Conv1d front end on the
raw samples, then small Conv1d + ReLU + max-pool stages, global average pool and a linear head;
BatchNorm dropped to keep the edge-deployment graph simple) trained with SGD + momentum. Clips are
float waveforms in [-1, 1], except the 16 clips of one recording session that went through a
different loader (scipy.io.wavfile-style) and arrived as raw int16 PCM, i.e. values up to +-32767;
the session-ordered loader puts them all in one batch. When that batch comes up mid-run, every
activation and logit scales by ~3e4 (the ReLU network is nearly positively homogeneous), the
weight gradients scale the same way and a single SGD step throws the weights thousands of times
further than any normal step: the loss jumps by many orders of magnitude (1e3 and far beyond) and
then the run either overflows to NaN or is left with dead ReLUs and a loss stuck at log(4). The
fixed run converts those clips to float (divides by 32768) like the others; nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "frontend"
SOURCE = ('Known pattern of mixed audio loaders: scipy.io.wavfile returns int16 PCM while '
          "torchaudio.load returns float in [-1, 1] (torchaudio docs, 'normalize' argument); M5 "
          'raw-waveform CNN from Dai et al. 2017')

N, K = 1024, 4
BAD_ROWS = tuple(range(16))      # the whole batch: one recording session, loaded without shuffling


class M5(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = nn.Conv1d(1, 16, 80, stride=4, padding=38)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(16, 32, 3, padding=1)
        self.pool2 = nn.MaxPool1d(4)
        self.conv3 = nn.Conv1d(32, 32, 3, padding=1)
        self.fc = nn.Linear(32, K)

    def forward(self, wav):
        x = self.pool1(torch.relu(self.frontend(wav)))
        x = self.pool2(torch.relu(self.conv2(x)))
        x = torch.relu(self.conv3(x))
        return self.fc(x.mean(-1))


def _clip(g, c):
    t = torch.arange(N).float() / 16000.0
    f0 = 300.0 * (c + 1)
    sweep = 1.0 + (0.5 if c % 2 else -0.3) * t / t[-1]
    amp = 0.2 + 0.5 * float(torch.rand(1, generator=g))
    phase = 6.283 * float(torch.rand(1, generator=g))
    return amp * torch.sin(2 * math.pi * f0 * sweep * t + phase) + 0.05 * torch.randn(N, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = []
    for b in range(30):
        y = torch.randint(0, K, (16,), generator=g)
        wav = torch.stack([_clip(g, int(c)) for c in y])[:, None]
        if b == 17:                                   # clips of one recording session decoded as int16 PCM
            for r in BAD_ROWS:
                pcm = torch.round(wav[r] * 32767.0).clamp(-32768, 32767)
                wav[r] = pcm / 32768.0 if fixed else pcm
        batches.append((wav, y))
    model = M5()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 90
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
