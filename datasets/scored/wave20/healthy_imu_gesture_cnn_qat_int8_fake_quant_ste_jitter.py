"""Healthy: quantisation-aware training (QAT) of a tiny 1D CNN for accelerometer/gyro
gesture recognition destined for a microcontroller (TinyML, int8 CMSIS-NN deployment).
Weights and activations pass through torch.fake_quantize_per_tensor_affine (int8, fixed
power-of-two scales as the MCU kernels require) and gradients use the straight-through
estimator.

Why it looks alarming: the quantisation grid makes the loss jumpy (weights snap between
int8 levels, many activation gradients are exactly zero where values clip at the int8 range,
and some steps barely move the loss), and ~half of the ReLU outputs are zero.  It still
converges steadily: nothing is wrong.

ORIGIN: None (healthy).  `fixed=True` builds the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "TinyML QAT with fake-quant + STE (Jacob et al. 2018; TensorFlow Lite Micro magic-wand gesture model); torch.fake_quantize_per_tensor_affine"

_CFG = {0: dict(ch=8, lr=3e-3, bs=32, steps=100, a_scale=1 / 16),
        1: dict(ch=12, lr=2e-3, bs=24, steps=120, a_scale=1 / 32),
        2: dict(ch=6, lr=5e-3, bs=48, steps=80, a_scale=1 / 16)}


class FQConv(nn.Conv1d):
    def forward(self, x):
        w = torch.fake_quantize_per_tensor_affine(self.weight, 1 / 64, 0, -128, 127)
        return F.conv1d(x, w, self.bias, self.stride, self.padding)


class FQAct(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.fake_quantize_per_tensor_affine(F.relu(x), self.scale, 0, -128, 127)


class GestureNet(nn.Module):
    def __init__(self, ch, s):
        super().__init__()
        self.inq = FQAct(1 / 32)
        self.c1, self.a1 = FQConv(6, ch, 5, padding=2), FQAct(s)
        self.c2, self.a2 = FQConv(ch, 2 * ch, 5, padding=2, stride=2), FQAct(s)
        self.c3, self.a3 = FQConv(2 * ch, 2 * ch, 3, padding=1, stride=2), FQAct(s)
        self.fc = nn.Linear(2 * ch, 5)

    def forward(self, x):
        x = torch.fake_quantize_per_tensor_affine(x, 1 / 32, 0, -128, 127)
        h = self.a1(self.c1(x))
        h = self.a2(self.c2(h))
        h = self.a3(self.c3(h))
        return self.fc(h.mean(-1))


def _batch(g, n, L=40):
    y = torch.randint(0, 5, (n,), generator=g)
    t = torch.linspace(0, 1, L)
    freq = torch.tensor([1.0, 2.0, 3.0, 1.5, 2.5])[y].view(n, 1, 1)
    axis = torch.stack([torch.arange(6) == (k % 6) for k in range(5)]).float()[y].unsqueeze(-1)
    sig = torch.sin(2 * 3.14159 * freq * t.view(1, 1, L) + torch.rand(n, 1, 1, generator=g))
    x = axis * sig * 1.5 + 0.3 * torch.randn(n, 6, L, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(123 + seed)
    model = GestureNet(c["ch"], c["a_scale"])
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=c["steps"])
