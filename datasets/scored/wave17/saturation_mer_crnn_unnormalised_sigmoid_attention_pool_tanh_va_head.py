"""Music emotion recognition CRNN (log-mel CNN -> GRU -> attention pooling -> dense -> tanh)
regressing arousal/valence in [-1, 1] (DEAM/PMEmo-style annotations), MSE, momentum SGD.

Mechanism: the attention pooling uses sigmoid attention weights w_t = sigmoid(a(h_t)) but the
user forgot to normalise them (pooled = sum_t w_t h_t instead of sum_t w_t h_t / sum_t w_t).
The pooled vector, and the gradient of the head, are ~T/2 (tens of) times larger than intended:
from step 0 or within the first SGD updates the head's pre-activations reach magnitudes of tens, the tanh output
is pinned at +-1 for every clip, its derivative vanishes and the MSE stays at or above its
initial level. ORIGIN is va_act, the tanh that saturates. Fix: normalise the attention weights
(divide by sum_t w_t); nothing else changed.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "va_act"
SOURCE = "CRNN music emotion regression with sigmoid attention pooling; attention weights not normalised over time"

N_MEL = 32


class MERCRNN(nn.Module):
    def __init__(self, c, h, normalise):
        super().__init__()
        self.normalise = normalise
        self.cnn = nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d((1, 4)),
                                 nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d((1, 4)))
        self.gru = nn.GRU(c * N_MEL // 16, h, batch_first=True)
        self.att = nn.Linear(h, 1)
        self.fc = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 2))
        self.va_act = nn.Tanh()

    def forward(self, x):  # (B, T, F)
        z = self.cnn(x.unsqueeze(1))
        B, C, T, F = z.shape
        h = self.gru(z.permute(0, 2, 1, 3).reshape(B, T, C * F))[0]
        w = torch.sigmoid(self.att(h))
        pooled = (w * h).sum(1)
        if self.normalise:
            pooled = pooled / w.sum(1)
        return self.va_act(self.fc(pooled))


def _batch(g, n, T):
    va = torch.rand(n, 2, generator=g) * 1.6 - 0.8
    t = torch.arange(T).float()
    x = torch.randn(n, T, N_MEL, generator=g) * 0.5
    tempo = (0.3 + 0.25 * va[:, 0]).view(n, 1)              # arousal -> onset rate / energy
    x[:, :, :8] += (1.0 + va[:, :1]).unsqueeze(1) * (torch.sin(tempo * t) > 0.5).float().unsqueeze(-1)
    x[:, :, 16:24] += va[:, 1].view(n, 1, 1) * 1.5          # valence -> mode/timbre band
    return x, va


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, h = [(8, 32), (12, 24), (6, 48)][seed % 3]
    lr = [0.02, 0.01, 0.03][seed % 3]
    bs, T = [(16, 64), (12, 96), (24, 48)][seed % 3]
    steps = 80
    model = MERCRNN(c, h, normalise=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_batch(g, bs, T) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
