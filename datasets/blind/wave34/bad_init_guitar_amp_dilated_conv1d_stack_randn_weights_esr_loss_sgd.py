"""Guitar amplifier emulation with a dilated, causal 1-D conv stack (TCN-style, PReLU, no norm),
trained on DI -> amp pairs with the error-to-signal ratio (ESR) loss and plain SGD.

Mechanism: the conv kernels were ported from a hand-written TensorFlow graph that created its
variables with `tf.random.normal(shape)` (stddev 1.0) and were re-created here as
`nn.Parameter(torch.randn(...))`-style init (`nn.init.normal_(w, 0, 1)`). With fan-in
k*C ~ 36-72 every layer multiplies the activation scale by ~sqrt(k*C/2) ~ 5-6, so after 5-7
layers the predicted waveform is 1e4-1e6 times the target from step 0; the ESR is ~1e9, the
first SGD step is enormous and the weights/loss run off to inf/NaN within a few steps.

ORIGIN: `body.0`, the first conv of the stack; the geometric growth starts at its output and
every later layer compounds it (no single later layer is special).

Fix: Kaiming-normal init (fan-in, PReLU slope 0.25) for every conv - nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "body.0"
SOURCE = ("Pattern from ports of hand-written TF amp/pedal models (variables from "
          "tf.random.normal, stddev=1) into PyTorch; architecture after Steinmetz & Reiss 2021 "
          "'Efficient neural networks for real-time modeling of analog dynamic range compression' "
          "and Wright et al. 2020 (ESR loss); weight-scale explosion as in He et al. 2015.")


class CausalConv(nn.Conv1d):
    def __init__(self, cin, cout, k, dilation):
        super().__init__(cin, cout, k, dilation=dilation)
        self.left = (k - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class AmpTCN(nn.Module):
    def __init__(self, ch, depth, k=3):
        super().__init__()
        layers = []
        cin = 1
        for i in range(depth):
            layers.append(CausalConv(cin, ch, k, 2 ** i))
            layers.append(nn.PReLU(ch))
            cin = ch
        self.body = nn.Sequential(*layers)
        self.out = nn.Conv1d(ch, 1, 1)

    def forward(self, x):
        return self.out(self.body(x))


def _di_batch(g, B, T, sr=8000.0):
    t = torch.arange(T) / sr
    f0 = 82.0 * 2 ** (torch.randint(0, 24, (B, 1), generator=g) / 12.0)
    amp = 0.2 + 0.6 * torch.rand(B, 1, generator=g)
    decay = 2.0 + 6.0 * torch.rand(B, 1, generator=g)
    x = torch.zeros(B, T)
    for h in range(1, 5):
        ph = 2 * math.pi * torch.rand(B, 1, generator=g)
        x = x + (0.7 ** h) * torch.sin(2 * math.pi * h * f0 * t + ph)
    x = amp * x * torch.exp(-decay * t)
    x = x + 0.003 * torch.randn(B, T, generator=g)
    return x.unsqueeze(1)


def _amp(x):
    # "device under test": pre-emphasis, asymmetric soft clip, tone-stack low-pass
    pre = x - 0.5 * F.pad(x, (1, 0))[..., :-1]
    y = torch.tanh(3.0 * pre + 0.2) - math.tanh(0.2)
    k = torch.tensor([0.25, 0.35, 0.25, 0.15]).view(1, 1, 4)
    return F.conv1d(F.pad(y, (3, 0)), k)


def esr_loss(y, t):
    return ((y - t) ** 2).sum() / ((t ** 2).sum() + 1e-5)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [5, 6, 7][seed % 3]
    ch = [12, 16, 24][seed % 3]
    lr = [0.01, 0.005, 0.003][seed % 3]
    B = [8, 6, 4][seed % 3]
    steps = 80
    torch.manual_seed(seed)
    model = AmpTCN(ch, depth)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, a=0.25, nonlinearity="leaky_relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)  # tf.random.normal default stddev
            nn.init.zeros_(m.bias)
    batches = []
    for _ in range(steps):
        x = _di_batch(g, B, 1024)
        batches.append((x, _amp(x)))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=esr_loss, batches=batches, steps=steps)
