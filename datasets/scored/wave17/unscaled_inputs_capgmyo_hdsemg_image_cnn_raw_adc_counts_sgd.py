"""High-density sEMG gesture recogniser (Geng et al. 2016 'instantaneous sEMG images', CapgMyo
8x16 electrode grid -> 2D ConvNet -> dense -> gesture), cross-entropy, momentum SGD.

Mechanism: the original network starts with a BatchNorm on the input; the port dropped it and
fed the amplifier's raw 16-bit ADC counts (DC offset ~2^15 minus a few hundred counts of EMG).
The first conv therefore produces activations of ~1e4-1e5, the logits are of the same order and
the initial cross-entropy is in the thousands; the gradients w.r.t. the first conv are scaled by
the raw counts and momentum SGD diverges (inf/NaN) or is thrown into a dead, constant regime.
ORIGIN is conv1, the first layer that receives the unscaled inputs. Fix: standardise the inputs
(convert counts to mV and z-score with the training-set mean/std).
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "conv1"
SOURCE = "Geng et al. 2016 CapgMyo sEMG image ConvNet; input BatchNorm dropped, raw 16-bit ADC counts fed to the net"

N_CLS = 8


class SEMGNet(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.conv1 = nn.Conv2d(1, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(c * 8 * 16, h), nn.ReLU(), nn.Linear(h, N_CLS))

    def forward(self, x):
        return self.fc(torch.relu(self.conv2(torch.relu(self.conv1(x)))))


def _batch(g, n, fixed):
    y = torch.randint(0, N_CLS, (n,), generator=g)
    rows = torch.arange(8).float().view(8, 1)
    cols = torch.arange(16).float().view(1, 16)
    cx = (2 * y).float().view(n, 1, 1) + 0.5 * torch.randn(n, 1, 1, generator=g)  # active muscle position
    cy = (y % 2 * 4 + 2).float().view(n, 1, 1)
    act = torch.exp(-((cols - cx) ** 2 / 8.0 + (rows - cy) ** 2 / 4.0))
    mv = act * (0.5 + 0.5 * torch.rand(n, 1, 1, generator=g)) + 0.05 * torch.randn(n, 8, 16, generator=g)  # rectified-RMS mV
    counts = 32768.0 + 400.0 * mv  # 16-bit ADC, offset binary
    x = counts.round().unsqueeze(1)
    if fixed:
        x = ((x - 32768.0) / 400.0 - 0.2) / 0.3  # counts -> mV, z-score with training-set stats
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, h = [(16, 64), (24, 128), (12, 96)][seed % 3]
    lr = [0.01, 0.005, 0.02][seed % 3]
    bs = [32, 64, 16][seed % 3]
    steps = 60
    model = SEMGNet(c, h)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_batch(g, bs, fixed) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
