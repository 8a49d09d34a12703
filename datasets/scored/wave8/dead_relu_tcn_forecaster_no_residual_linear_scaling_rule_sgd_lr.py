"""A causal TCN forecaster (three dilated Conv1d layers with ReLU, no residual connections,
followed by a ReLU MLP decoder) predicts the next 24 hours of standardised load from 96 hours
of history with SGD + momentum 0.9. The reference notebook used lr=0.1 at batch size 4; the
author applies the linear-scaling rule for batch 32 and gets lr=0.8, without the warmup that the
rule requires. The early momentum steps overshoot, push the pre-activations of the decoder's ReLU
layer (decoder.1) and then of the last temporal layer (tcn.5) far negative for every window, and
those units never fire again: after a few dozen steps ~100% of decoder.1 and tcn.5 units are
zero for all inputs, no gradient reaches the convolutions, the forecast degenerates to the
output bias (a mean profile) and the MSE plateaus around the variance of the target, finite
throughout. The fix uses lr=0.05; model, data and loss unchanged."""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "decoder.1"
SOURCE = ("Goyal et al. 2017 linear-scaling rule applied without warmup; Bai et al. 2018 TCN "
          "forecasters; 'model predicts a constant, all ReLU activations zero' (dying ReLU) forum "
          "reports after raising the SGD learning rate.")

L, HOR = 96, 24


class CausalConv(nn.Module):
    def __init__(self, cin, cout, k, d):
        super().__init__()
        self.pad = (k - 1) * d
        self.conv = nn.Conv1d(cin, cout, k, dilation=d)

    def forward(self, x):
        return self.conv(nn.functional.pad(x, (self.pad, 0)))


class TCNForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.tcn = nn.Sequential(CausalConv(2, 16, 3, 1), nn.ReLU(),
                                 CausalConv(16, 16, 3, 4), nn.ReLU(),
                                 CausalConv(16, 16, 3, 16), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(16 * 8, 64), nn.ReLU(), nn.Linear(64, HOR))

    def forward(self, x):  # x: (B, L, 2) = (load, hour-of-day feature)
        h = self.tcn(x.transpose(1, 2))[:, :, -8:]  # last 8 time steps of the receptive field
        return self.decoder(h.flatten(1))


def simulate(g, length):
    t = torch.arange(length, dtype=torch.float32)
    load = torch.sin(2 * math.pi * t / 24) + 0.5 * torch.sin(2 * math.pi * t / 168 + 1.0)
    load = load + 0.3 * torch.sin(2 * math.pi * t / 12 + float(torch.rand(1, generator=g)) * 6)
    load = load + 0.2 * torch.randn(length, generator=g)
    load = (load - load.mean()) / load.std()
    hod = torch.cos(2 * math.pi * (t % 24) / 24)
    return torch.stack([load, hod], -1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TCNForecaster()
    steps, B = 150, 32
    lr = 0.05 if fixed else 0.1 * (B / 4)  # linear-scaling rule, no warmup
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    series = simulate(g, 4000)
    batches = []
    for s in range(steps):
        st = torch.randint(0, 4000 - L - HOR, (B,), generator=g).tolist()
        x = torch.stack([series[i:i + L] for i in st])
        y = torch.stack([series[i + L:i + L + HOR, 0] for i in st])
        batches.append((x, y))
    mse = nn.MSELoss()

    def loss_fn(out, y):
        return mse(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
