"""Per-frame gait-phase labelling (loading / mid-stance / push-off / swing) from shank IMU with a
dilated temporal convolution network whose conv weights are drawn N(0, 0.001).

Mechanism: the weights are initialised with a Caffe-style ``gaussian std=0.001`` filler.  Each
conv layer multiplies the activation scale by ~sqrt(C*k)*1e-3 ~ 0.01, so after 5-7 layers the
features that reach the classifier are ~1e-10-1e-14 of the input: the logits are just the head
bias, and the gradients to every conv weight are scaled down by the same geometric factor.  The
head bias learns the (balanced) class prior and nothing else, so the cross-entropy sits at
log(4) for the whole run: a stall without any non-finite value.

ORIGIN: ``tcn.0`` - every conv carries the tiny init, but the attenuation starts at the first
conv, which already shrinks the IMU signal ~100x; every later layer compounds it.

Fix: Kaiming-normal initialisation of the convs (everything else unchanged).
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "tcn.0"
SOURCE = ("Known pattern: Caffe 'gaussian std: 0.001' fillers copied into deep conv nets give "
          "vanishing signal and a loss stuck at log(num_classes) (Glorot & Bengio 2010; He et al. "
          "2015; recurring 'loss stuck at 1.386 / 2.302' forum reports).")


class GaitPhaseTCN(nn.Module):
    def __init__(self, c_in, ch, depth, n_cls=4):
        super().__init__()
        layers, c = [], c_in
        for i in range(depth):
            d = 2 ** (i % 4)
            layers += [nn.Conv1d(c, ch, 3, padding=d, dilation=d), nn.ReLU()]
            c = ch
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Conv1d(ch, n_cls, 1)

    def forward(self, x):            # x: (B, C, T)
        return self.head(self.tcn(x))  # (B, n_cls, T)


def _data(g, n, T):
    # gait cycle ~ 1.0-1.2 s at 50 Hz; phase advances with a per-stride cadence
    cadence = 0.9 + 0.3 * torch.rand(n, 1, generator=g)
    phase0 = 2 * math.pi * torch.rand(n, 1, generator=g)
    t = torch.arange(T).float().unsqueeze(0) / 50.0
    phase = (phase0 + 2 * math.pi * cadence * t) % (2 * math.pi)
    gyro = torch.sin(phase) + 0.2 * torch.randn(n, T, generator=g)
    acc = torch.cos(phase) + 0.2 * torch.randn(n, T, generator=g)
    jerk = torch.sin(2 * phase) + 0.2 * torch.randn(n, T, generator=g)
    x = torch.stack([gyro, acc, jerk], 1)
    y = (phase / (math.pi / 2)).long().clamp(max=3)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    depth = [5, 7, 6][seed % 3]
    ch = [48, 32, 64][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = 150
    T = 64
    model = GaitPhaseTCN(3, ch, depth)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.001)
            nn.init.zeros_(m.bias)
    x, y = _data(g, bs * steps, T)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
