"""Wave-U-Net (Stoller et al. 2018) singing-voice / accompaniment separation on raw
waveform chunks, with a hand-written init loop that draws every Conv1d weight from
N(0, 1) ("weights ~ N(0,1)" copied from a toy notebook) instead of a fan-in scaled init.

Mechanism: each Conv1d has fan_in = C_in * kernel (hundreds), so with std 1 every layer
multiplies the activation scale by roughly sqrt(fan_in/2) ~ 10x. There is no normalisation
anywhere in Wave-U-Net, so the scale grows geometrically through the downsampling path
from step 0; the separated sources come out ~1e7-1e10 times too large and the first MSE
is 1e13-1e21.  Momentum SGD cannot absorb gradients of that size: the very first update
throws the weights so far that the next forward pass overflows and the loss is NaN.

ORIGIN: `down.0.conv` -- the first badly initialised conv; the blow-up starts there
(its output is already ~sqrt(fan_in) times too large) and every later conv compounds it.

Fix: kaiming_normal_ (leaky_relu, a=0.2) on the convs, zero biases.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "down.0.conv"
SOURCE = ("Wave-U-Net (Stoller, Ewert, Dixon 2018) re-implementations; forum reports of "
          "'loss is nan from the first iterations' after a custom weights_init with "
          "normal_(0, 1) on all conv layers of a norm-free 1-D U-Net")


class Down(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=k // 2)

    def forward(self, x):
        return F.leaky_relu(self.conv(x), 0.2)


class Up(nn.Module):
    def __init__(self, cin, cskip, cout, k):
        super().__init__()
        self.conv = nn.Conv1d(cin + cskip, cout, k, padding=k // 2)

    def forward(self, x, skip):
        x = F.interpolate(x, size=skip.shape[-1], mode="linear", align_corners=False)
        return F.leaky_relu(self.conv(torch.cat([x, skip], 1)), 0.2)


class WaveUNet(nn.Module):
    def __init__(self, levels, growth, k_down=15, k_up=5, n_src=2):
        super().__init__()
        chans = [growth * (i + 1) for i in range(levels + 1)]
        self.down = nn.ModuleList()
        cin = 1
        for i in range(levels):
            self.down.append(Down(cin, chans[i], k_down))
            cin = chans[i]
        self.bottleneck = nn.Conv1d(chans[levels - 1], chans[levels], k_down, padding=k_down // 2)
        self.up = nn.ModuleList()
        cin = chans[levels]
        for i in reversed(range(levels)):
            self.up.append(Up(cin, chans[i], chans[i], k_up))
            cin = chans[i]
        self.out = nn.Conv1d(cin + 1, n_src, 1)

    def forward(self, mix):
        skips = []
        x = mix
        for d in self.down:
            x = d(x)
            skips.append(x)
            x = x[..., ::2]  # decimation
        x = F.leaky_relu(self.bottleneck(x), 0.2)
        for u, s in zip(self.up, reversed(skips)):
            x = u(x, s)
        return self.out(torch.cat([x, mix], 1))


def _make_batch(g, bs, T, sr=8000.0):
    t = torch.arange(T) / sr
    # "vocals": a few harmonics of a gliding f0 with an amplitude envelope
    f0 = 150 + 250 * torch.rand(bs, 1, generator=g)
    glide = 1 + 0.05 * torch.rand(bs, 1, generator=g) * t
    env = 0.5 + 0.5 * torch.sin(2 * math.pi * (1 + 3 * torch.rand(bs, 1, generator=g)) * t)
    voc = sum(torch.sin(2 * math.pi * h * f0 * glide * t) / h for h in (1, 2, 3)) * env * 0.3
    # "accompaniment": low bass note + band-limited noise
    fb = 50 + 40 * torch.rand(bs, 1, generator=g)
    noise = torch.randn(bs, T, generator=g)
    noise = F.avg_pool1d(noise[:, None], 5, 1, 2)[:, 0]
    acc = 0.3 * torch.sin(2 * math.pi * fb * t) + 0.15 * noise
    mix = (voc + acc)[:, None]
    return mix, torch.stack([voc, acc], 1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(levels=4, growth=12, bs=8, T=1024, lr=0.01, steps=80),
           dict(levels=5, growth=10, bs=6, T=1024, lr=0.005, steps=90),
           dict(levels=3, growth=16, bs=8, T=768, lr=0.01, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = WaveUNet(cfg["levels"], cfg["growth"])
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, a=0.2, nonlinearity="leaky_relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = [_make_batch(g, cfg["bs"], cfg["T"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
