"""1D ResNet ECG rhythm classifier (Hannun et al. 2019 style) with BatchNorm removed for small
batches, and every conv initialised with `nn.init.normal_(m.weight)` (mean 0, std 1) by a user who
took the default arguments for a sensible init.

Mechanism: with std=1 and fan_in = C*k ~ 100, each conv multiplies the activation scale by ~7; the
stem plus the residual branches compound this geometrically, so the logits are ~1e8 at step 0,
the first SGD update is astronomically large, and the next forward overflows to inf/NaN.
ORIGIN is the stem conv, where the geometric growth starts. Fix: kaiming_normal_ (fan_out, relu),
as torchvision's ResNet does; nothing else changed.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "stem"
SOURCE = "Hannun et al. 2019 ECG ResNet ported without BN; nn.init.normal_ default std=1 init blow-up"


class Block(nn.Module):
    def __init__(self, c, k):
        super().__init__()
        self.conv1 = nn.Conv1d(c, c, k, padding=k // 2)
        self.conv2 = nn.Conv1d(c, c, k, padding=k // 2)

    def forward(self, x):
        return F.relu(x + self.conv2(F.relu(self.conv1(x))))


class ECGResNet(nn.Module):
    def __init__(self, c, k, n_blocks, n_cls):
        super().__init__()
        self.stem = nn.Conv1d(1, c, 15, padding=7, stride=2)
        self.blocks = nn.Sequential(*[Block(c, k) for _ in range(n_blocks)])
        self.head = nn.Linear(c, n_cls)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = F.max_pool1d(self.blocks(x), 2)
        return self.head(x.mean(-1))


def _beats(g, n, T):
    # 4 beat morphologies: normal, inverted, wide-QRS (bundle branch block), tall-peaked
    y = torch.randint(0, 4, (n,), generator=g)
    t = torch.arange(T).float()
    rr = 40.0 + 20.0 * torch.rand(n, 1, 1, generator=g)
    ph = torch.rand(n, 1, 1, generator=g) * rr
    d = torch.remainder(t - ph, rr)
    d = torch.minimum(d, rr - d)
    amp = torch.tensor([1.0, -1.0, 1.0, 2.5])[y].view(n, 1, 1)
    w = torch.tensor([2.0, 2.0, 6.0, 2.0])[y].view(n, 1, 1)
    x = amp * torch.exp(-0.5 * (d / w) ** 2) + 0.1 * torch.randn(n, 1, T, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, k, nb = [(32, 7, 3), (24, 9, 3), (32, 5, 2)][seed % 3]
    lr = [0.01, 0.003, 0.03][seed % 3]
    bs = [16, 32, 24][seed % 3]
    steps = 100
    model = ECGResNet(c, k, nb, 4)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_beats(g, bs, 256) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
