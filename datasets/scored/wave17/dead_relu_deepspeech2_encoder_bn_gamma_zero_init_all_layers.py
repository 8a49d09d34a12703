"""DeepSpeech2-style acoustic encoder (2D conv + BatchNorm + clipped ReLU Hardtanh(0, 20), then a
bidirectional GRU, mean-pooled) fine-tuned as a spoken-command classifier.

Mechanism: the user wanted the 'zero-init the last BN gamma' trick from ResNet recipes but wrote
`for m in model.modules(): if isinstance(m, nn.BatchNorm2d): nn.init.zeros_(m.weight)`, on a
network with no residual path. Every BN then outputs exactly beta = 0, so every clipped ReLU
sits at 0, where its gradient is 0: the conv front end is dead from step 0, gamma and beta never
receive a gradient, the GRU sees constant zeros and the classifier can only learn the (uniform)
class prior -- the loss stays at ln(n_classes). ORIGIN is the first clipped ReLU (conv.2), the
first activation that is dead. Fix: keep the default BN init (gamma = 1).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "conv.2"
SOURCE = "deepspeech.pytorch conv front end; zero_init_residual-style BN gamma=0 applied to every BN of a plain net"

N_MEL, N_CLS = 32, 8


class DS2Cmd(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, c, (5, 5), stride=(2, 2), padding=(2, 2)), nn.BatchNorm2d(c), nn.Hardtanh(0, 20),
            nn.Conv2d(c, c, (5, 5), stride=(2, 1), padding=(2, 2)), nn.BatchNorm2d(c), nn.Hardtanh(0, 20))
        self.rnn = nn.GRU(c * N_MEL // 4, h, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * h, N_CLS)

    def forward(self, x):  # x: (B, F, T)
        z = self.conv(x.unsqueeze(1))  # B,C,F/4,T/2
        B, C, F, T = z.shape
        z = self.rnn(z.reshape(B, C * F, T).transpose(1, 2))[0]
        return self.fc(z.mean(1))


def _batch(g, n, T):
    y = torch.arange(n) % N_CLS
    y = y[torch.randperm(n, generator=g)]
    x = torch.randn(n, N_MEL, T, generator=g)
    t = torch.arange(T).float()
    for i in range(n):
        k = int(y[i])
        band = 3 * k + 2
        on = int(torch.randint(0, T // 2, (1,), generator=g))
        x[i, band:band + 4, on:on + T // 3] += 2.5
        x[i, (band + 9) % N_MEL, :] += torch.sin(t * (0.2 + 0.1 * k))
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, h = [(8, 32), (12, 24), (6, 48)][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [16, 24, 32][seed % 3]
    steps = 70
    model = DS2Cmd(c, h)
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.zeros_(m.weight)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    batches = [_batch(g, bs, 40) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
