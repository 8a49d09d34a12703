"""Gearbox/bearing fault classifier with second-order (Gram) pooling, trained under fp16 autocast.

Mechanism: windows of a 6-channel accelerometer/tachometer stream (2048-4096
samples; accelerations exported by the DAQ in m/s^2, gravity on the z axis, fault
impacts of tens of g) are embedded per time step by a small pointwise MLP (Linear-ReLU-Linear-ReLU),
and the window is summarised by second-order pooling - the Gram matrix of the
embedded channels over time, G = F F^T / T - before a linear classifier (healthy,
inner-race, outer-race, ball, gear-tooth fault). Under ``torch.autocast(float16)``
the ``bmm`` forming G runs in half precision and accumulates T products of
activations *before* the division by T. Fault impulses make a few embedding
channels large, and as training sharpens them the largest entries pass 65504:
G contains inf, the normalised descriptor inf, the logits NaN and the loss is
non-finite. There is no GradScaler, and none would help: the overflow is in the
forward pass.

ORIGIN: ``embed`` - the per-step embedding whose output enters the overflowing
half-precision bmm (the bmm is a functional call, not a module).

Fix: compute the Gram matrix in float32 (autocast disabled for that op - "fp32 for
large reductions"); the rest of the model still runs under fp16 autocast.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "embed"
SOURCE = ("Second-order / covariance pooling (Lin et al. 2015 bilinear CNN; Li et al. 2017 "
          "iSQRT-COV) applied to vibration-based fault diagnosis (CWRU bearing, PHM gearbox data); "
          "PyTorch AMP docs (reductions belong in float32) and forum reports of bilinear/Gram "
          "features overflowing to inf under fp16 autocast.")

N_CLS = 5


class SecondOrderFaultNet(nn.Module):
    def __init__(self, ch, fixed):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(6, ch), nn.ReLU(), nn.Linear(ch, ch), nn.ReLU())
        self.classifier = nn.Linear(ch * ch, N_CLS)
        self.fixed = fixed

    def forward(self, x):                       # x: B x T x 6
        f = self.embed(x).transpose(1, 2)       # B x C x T
        T = f.shape[-1]
        if self.fixed:
            with torch.autocast(device_type="cpu", enabled=False):
                f32 = f.float()
                gram = torch.bmm(f32, f32.transpose(1, 2)) / T
        else:
            gram = torch.bmm(f, f.transpose(1, 2)) / T
        return self.classifier(gram.flatten(1))


def _windows(g, n, T, severity):
    t = torch.arange(T).float() / 12000.0  # 12 kHz
    cls = torch.randint(0, N_CLS, (n,), generator=g)
    shaft = 25 + 5 * torch.rand(n, 1, generator=g)
    x = 0.3 * torch.randn(n, T, 6, generator=g)
    x[..., 0] += torch.sin(2 * math.pi * shaft * t)
    x[..., 5] = torch.sin(2 * math.pi * shaft * t)  # tacho
    fault_freq = torch.tensor([0.0, 5.4, 3.6, 2.4, 1.0])[cls][:, None] * shaft
    amp = severity * torch.tensor([0.0, 40.0, 32.0, 25.0, 18.0])[cls][:, None]  # impact peaks in g
    ch = torch.tensor([0, 1, 2, 3, 4])[cls]
    phase = (fault_freq * t) % 1.0
    impulses = amp * torch.exp(-phase * 60.0) * torch.sin(2 * math.pi * 3000 * t)
    for i in range(n):
        if cls[i] > 0:
            x[i, :, int(ch[i])] += impulses[i]
            x[i, :, 0] += 0.5 * impulses[i]
    x = x * 9.81            # the DAQ exports m/s^2
    x[..., 2] += 9.81       # z axis carries gravity
    x[..., 5] /= 9.81       # tacho channel is a voltage
    return x, cls


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12 + seed)
    ch = [16, 24, 12][seed % 3]
    T = [2048, 3072, 4096][seed % 3]
    bs = [12, 8, 8][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    severity = [0.6, 0.7, 1.0][seed % 3]  # fault severity differs between test rigs
    steps = 100
    model = SecondOrderFaultNet(ch, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_windows(g, bs, T, severity) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
