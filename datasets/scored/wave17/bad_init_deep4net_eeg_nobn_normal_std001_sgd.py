"""Deep4Net (Schirrmeister et al. 2017) motor-imagery EEG decoder, batch_norm=False variant,
with every conv initialised N(0, 0.01) as in an old Caffe/Keras recipe and trained with SGD.

Mechanism: without batch norm, each conv multiplies the activation scale by
~0.01*sqrt(fan_in) (~0.1-0.2); over 5-6 conv layers the logits shrink by ~1e-4..1e-5 from step 0,
so every gradient is vanishingly small and plain momentum SGD cannot move the net: the loss sits
at ln(4). ORIGIN is conv_time, the first badly initialised layer where the geometric shrinkage
starts. Fix: xavier_uniform init (braindecode's default), nothing else changed.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "conv_time"
SOURCE = "braindecode Deep4Net with batch_norm=False; Caffe-style gaussian std=0.01 init (vanishing activations without BN)"


class Deep4(nn.Module):
    def __init__(self, n_ch, n_cls, widths):
        super().__init__()
        self.conv_time = nn.Conv2d(1, widths[0], (1, 5))
        self.conv_spat = nn.Conv2d(widths[0], widths[0], (n_ch, 1), bias=False)
        self.pool = nn.MaxPool2d((1, 2))
        blocks = []
        for a, b in zip(widths[:-1], widths[1:]):
            blocks += [nn.Conv2d(a, b, (1, 5)), nn.ELU(), nn.MaxPool2d((1, 2))]
        self.blocks = nn.Sequential(*blocks)
        self.classifier = nn.Conv2d(widths[-1], n_cls, 1)

    def forward(self, x):
        x = self.pool(F.elu(self.conv_spat(self.conv_time(x))))
        x = self.blocks(x)
        return self.classifier(x).mean(dim=(2, 3))


def _data(g, n, n_ch, T, n_cls):
    t = torch.arange(T) / 128.0
    y = torch.randint(0, n_cls, (n,), generator=g)
    x = torch.randn(n, 1, n_ch, T, generator=g)
    freqs = torch.tensor([8.0, 12.0, 18.0, 24.0])
    for i in range(n):
        c = int(y[i])
        ph = torch.rand(1, generator=g) * 6.28
        x[i, 0, c % n_ch] += 2.0 * torch.sin(2 * math.pi * freqs[c] * t + ph)
        x[i, 0, (c + 2) % n_ch] += 1.5 * torch.sin(2 * math.pi * freqs[c] * t + ph)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    widths = [[12, 24, 48], [10, 20, 40, 60], [16, 24, 32, 48]][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    bs = [16, 24, 32][seed % 3]
    n_ch, T, steps = 8, 256, 80
    model = Deep4(n_ch, 4, widths)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.xavier_uniform_(m.weight)
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_data(g, bs, n_ch, T, 4) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
