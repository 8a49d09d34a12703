"""ShallowFBCSPNet-style EEG decoder (Schirrmeister et al. 2017; braindecode) for two-class motor
imagery: temporal convolution, spatial convolution across electrodes, squaring non-linearity,
mean pooling, log, linear classifier, i.e. a learned filter-bank log-band-power pipeline. The
variant without batch norm is used, inputs are in microvolts as braindecode recommends (DC-coupled
recordings, not high-pass filtered, so electrode offsets of a few hundred uV remain) and the run
uses float16 autocast. The spatial-filter outputs reach ~500 uV, harmless in float32, but the
squaring non-linearity runs in half precision on the fp16 conv output: every value above ~256
squares to more than 65504 and becomes inf, the pooled band power is inf, log(inf) = inf, and the
logits/loss are NaN from the first batches. A GradScaler would not help (the overflow is in the
forward pass). The fixed run only switches the autocast dtype to bfloat16, whose exponent range
covers the squared band power; everything else is identical."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "conv_nonlin_exp"
SOURCE = ("Schirrmeister et al. 2017 ShallowConvNet / braindecode ShallowFBCSPNet (square -> mean "
          "pool -> safe_log); fp16 overflow of squared activations with AMP")


class Expression(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def square(x):
    return x * x


def safe_log(x):
    return torch.log(torch.clamp(x, min=1e-6))


class ShallowFBCSPNet(nn.Module):
    def __init__(self, n_chans, n_times, n_filters=8, filter_len=13, pool_len=35, pool_stride=7, n_classes=2):
        super().__init__()
        self.conv_time = nn.Conv2d(1, n_filters, (1, filter_len))
        self.conv_spat = nn.Conv2d(n_filters, n_filters, (n_chans, 1), bias=False)
        self.conv_nonlin_exp = Expression(square)
        self.pool = nn.AvgPool2d((1, pool_len), (1, pool_stride))
        self.pool_nonlin_exp = Expression(safe_log)
        n_out = (n_times - filter_len + 1 - pool_len) // pool_stride + 1
        self.final_layer = nn.Linear(n_filters * n_out, n_classes)

    def forward(self, x):
        h = self.conv_spat(self.conv_time(x[:, None]))
        h = self.pool_nonlin_exp(self.pool(self.conv_nonlin_exp(h)))
        return self.final_layer(h.flatten(1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_chans, n_times, fs = 12, 160, 160.0
    t = torch.arange(n_times) / fs
    motor = torch.zeros(n_chans); motor[[3, 4, 7, 8]] = 1.0
    batches = []
    for _ in range(20):
        y = torch.randint(0, 2, (16,), generator=g)
        phase = 2 * math.pi * torch.rand(16, n_chans, 1, generator=g)
        # mu rhythm (10 Hz, ~60 uV) desynchronises over motor channels for class 1
        mu_amp = 60.0 * (1.0 - 0.9 * y[:, None, None] * motor[None, :, None])
        mu = mu_amp * torch.sin(2 * math.pi * 10.0 * t + phase)
        drift = 30.0 * torch.randn(16, n_chans, 1, generator=g) * torch.sin(2 * math.pi * 0.5 * t + phase)
        noise = 15.0 * torch.randn(16, n_chans, n_times, generator=g)
        offset = 400.0 * torch.randn(16, n_chans, 1, generator=g)   # electrode DC offsets, no high-pass
        batches.append((mu + drift + noise + offset, y))
    model = ShallowFBCSPNet(n_chans, n_times)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    steps = 250
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=torch.bfloat16 if fixed else torch.float16,
                scaler=None)
