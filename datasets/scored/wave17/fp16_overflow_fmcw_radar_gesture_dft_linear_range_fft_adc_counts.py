"""Soli-style FMCW radar gesture classifier: raw ADC chirp samples (12-bit counts with the usual
DC offset) -> range FFT implemented as a frozen nn.Linear holding the DFT matrix (ONNX/edge
friendly) -> |X| -> log1p -> per-frame MLP -> GRU over frames -> gesture class; trained with
fp16 autocast and a GradScaler.

Mechanism: under autocast the DFT Linear runs in float16. A chirp of 64 samples around a DC
offset of ~2048 counts gives a DC/range-bin value of ~1.3e5 and re**2 + im**2 of ~1e10, both far
past the fp16 maximum 65504, so the magnitude is inf from the first step; log1p(inf) = inf and
the next Linear produces inf - inf = NaN. The GradScaler cannot help: the overflow is in the
forward pass. ORIGIN is range_fft, the op-bearing module whose fp16 output first overflows.
Fix: run the range FFT (and the magnitude) in fp32 (autocast disabled for that block).
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "range_fft"
SOURCE = "Google Soli / mmWave gesture nets with DFT-as-Linear range processing under torch.autocast(float16)"

N_S, N_CHIRP, N_CLS = 64, 16, 5


class RadarNet(nn.Module):
    def __init__(self, h, fp32_fft):
        super().__init__()
        self.fp32_fft = fp32_fft
        n_r = N_S // 2 + 1
        k = torch.arange(n_r).float().unsqueeze(1)
        n = torch.arange(N_S).float().unsqueeze(0)
        W = torch.cat([torch.cos(2 * math.pi * k * n / N_S), -torch.sin(2 * math.pi * k * n / N_S)], 0)
        self.range_fft = nn.Linear(N_S, 2 * n_r, bias=False)
        self.range_fft.weight.data.copy_(W)
        self.range_fft.weight.requires_grad_(False)
        self.frame = nn.Sequential(nn.Linear(n_r, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.gru = nn.GRU(h, h, batch_first=True)
        self.head = nn.Linear(h, N_CLS)

    def _mag(self, x):
        z = self.range_fft(x)
        re, im = z.chunk(2, dim=-1)
        return torch.log1p(torch.sqrt(re * re + im * im))

    def forward(self, x):  # x: (B, chirps, samples) raw ADC counts
        if self.fp32_fft:
            with torch.autocast("cpu", enabled=False):
                m = self._mag(x.float())
        else:
            m = self._mag(x)
        m = (m - 6.0) / 2.0
        return self.head(self.gru(self.frame(m))[0][:, -1])


def _batch(g, n):
    y = torch.randint(0, N_CLS, (n,), generator=g)
    t = torch.arange(N_S).float()
    c = torch.arange(N_CHIRP).float().view(1, N_CHIRP, 1)
    r0 = (4 + 4 * y).float().view(n, 1, 1) + torch.rand(n, 1, 1, generator=g)
    v = torch.tensor([0.0, 0.15, -0.15, 0.3, -0.3])[y].view(n, 1, 1)
    beat = r0 + v * c  # range bin moves over chirps (gesture motion)
    sig = 300.0 * torch.cos(2 * math.pi * beat * t / N_S + torch.rand(n, 1, 1, generator=g) * 6.28)
    adc = 2048.0 + sig + 20.0 * torch.randn(n, N_CHIRP, N_S, generator=g)
    return adc.round(), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    h = [32, 48, 24][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [16, 32, 24][seed % 3]
    steps = 60
    model = RadarNet(h, fp32_fft=fixed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    batches = [_batch(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
