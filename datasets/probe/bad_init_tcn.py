"""Deep causal dilated 1-D convolution stack (TCN / WaveNet-like residual
blocks, dilations 1,2,4,...,no normalisation layers) whose custom init draws
every Conv1d weight from N(0, 1) -- ~8.5x the kaiming std sqrt(2/(3*48)).
Each residual block multiplies the activation scale by ~50, so the logits are
~1e8 at step 0; backprop through the same oversized convs gives gradients of
~1e9, the first SGD+momentum step throws the weights to ~1e7 and the next
forward pass overflows to inf/NaN.
fixed=True: kaiming_normal_ (fan_in, relu) for the conv weights, zero bias.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.conv1"
SOURCE = ("Known init pitfall (He et al. 2015; CS231n 'weight initialization'): "
          "nn.init.normal_(w, 0, 1) on conv layers makes activation variance grow by fan_in/2 per "
          "layer; TCN (Bai et al. 2018) style dilated residual stack without normalisation")

C = 48
K = 3
N_CLASSES = 8
L = 64
B = 32


class CausalConv(nn.Conv1d):
    def __init__(self, c_in, c_out, k, dilation):
        super().__init__(c_in, c_out, k, dilation=dilation)
        self.left = (k - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class TemporalBlock(nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.conv1 = CausalConv(c, c, K, dilation)
        self.conv2 = CausalConv(c, c, K, dilation)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        return x + h


class TCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(2, C)
        self.blocks = nn.ModuleList([TemporalBlock(C, 2 ** i) for i in range(5)])
        self.head = nn.Linear(C, N_CLASSES)

    def forward(self, x):  # x: (B, L, 2)
        h = self.inp(x).transpose(1, 2)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h[:, :, -1])


def _init(model, fixed):
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)


def _data(seed, steps):
    g = torch.Generator().manual_seed(300 + seed)
    n = steps * B
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    t = torch.arange(L).float()
    # class = frequency bucket of a noisy sinusoid + a marker channel
    freq = 0.05 + 0.04 * y.float()
    phase = 6.283 * torch.rand(n, 1, generator=g)
    sig = torch.sin(freq[:, None] * t[None] * 3.0 + phase) + 0.3 * torch.randn(n, L, generator=g)
    marker = (torch.rand(n, L, generator=g) < 0.05).float()
    x = torch.stack([sig, marker], dim=-1)
    return [(x[i * B:(i + 1) * B], y[i * B:(i + 1) * B]) for i in range(steps)]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps = 120
    model = TCN()
    _init(model, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=_data(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
