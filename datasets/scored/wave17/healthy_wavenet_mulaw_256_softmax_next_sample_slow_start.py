"""Small WaveNet (van den Oord et al. 2016): causal dilated convs with gated tanh*sigmoid units,
residual and skip connections, predicting the next 8-bit mu-law sample as a 256-way softmax,
Adam.

Looks alarming but is healthy: the cross-entropy starts at ln(256) ~ 5.5, well above anything a
classifier usually shows, sits almost flat for the first steps while the net only learns the
marginal mu-law histogram, and the gated tanh/sigmoid units look half-saturated on the loud parts
of the waveform. It then steadily drops as the dilated stack learns to predict from context.
ORIGIN is None (nothing is wrong). The `fixed` flag changes nothing.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "WaveNet mu-law 256-way categorical next-sample prediction (r9y9/wavenet_vocoder, ibab/tensorflow-wavenet)"

Q = 256


class Layer(nn.Module):
    def __init__(self, c, d):
        super().__init__()
        self.d = d
        self.conv = nn.Conv1d(c, 2 * c, 2, dilation=d)
        self.res = nn.Conv1d(c, c, 1)
        self.skip = nn.Conv1d(c, c, 1)

    def forward(self, x):
        h = self.conv(F.pad(x, (self.d, 0)))
        a, b = h.chunk(2, 1)
        z = torch.tanh(a) * torch.sigmoid(b)
        return x + self.res(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, c, n_layers):
        super().__init__()
        self.embed = nn.Embedding(Q, c)
        self.layers = nn.ModuleList([Layer(c, 2 ** (i % 6)) for i in range(n_layers)])
        self.post = nn.Sequential(nn.ReLU(), nn.Conv1d(c, c, 1), nn.ReLU(), nn.Conv1d(c, Q, 1))

    def forward(self, x):  # (B, T) mu-law codes
        h = self.embed(x).transpose(1, 2)
        skip = 0
        for l in self.layers:
            h, s = l(h)
            skip = skip + s
        return self.post(skip)  # (B, Q, T)


def _mulaw(x, mu=255):
    y = torch.sign(x) * torch.log1p(mu * x.abs()) / math.log1p(mu)
    return ((y + 1) / 2 * mu + 0.5).long().clamp(0, mu)


def _batch(g, n, T):
    t = torch.arange(T + 1).float()
    f = 0.02 + 0.06 * torch.rand(n, 2, 1, generator=g)
    ph = torch.rand(n, 2, 1, generator=g) * 6.28
    wav = (0.6 * torch.sin(2 * math.pi * f * t + ph) * torch.tensor([[1.0], [0.4]])).sum(1)
    wav = wav + 0.01 * torch.randn(n, T + 1, generator=g)
    q = _mulaw(wav.clamp(-1, 1))
    return q[:, :-1], q[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, n_layers = [(32, 8), (24, 10), (48, 6)][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    bs, T = [(8, 256), (6, 320), (12, 192)][seed % 3]
    steps = 100
    model = WaveNet(c, n_layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, bs, T) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
