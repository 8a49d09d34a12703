"""Intracortical BCI velocity decoder: an MLP maps z-scored threshold-crossing counts from a
96-channel Utah array (50 ms bins) to 2-D cursor velocity, trained online-style with SGD+momentum.

Mechanism: the channel means/stds are estimated on a clean calibration block. One minibatch
(the step varies with the seed) contains bins recorded during an electrical artifact (a
stimulation/chewing artifact that makes the threshold detector fire on every channel), so every
channel reports ~40-60 crossings per bin, i.e. z-scores of ~+40..+100 on all 96 channels at once.
That single batch produces an enormous MSE gradient; the momentum-SGD update writes a huge
rank-one step into the first layer (along the all-channels direction) and the hidden biases.
On the following, perfectly normal batches the wrecked decoder outputs values orders of
magnitude too large, their gradients are huge too, the momentum buffer keeps compounding them and
within a few steps the weights and the loss overflow to inf/NaN.

ORIGIN = "net.0": the corruption is in the data; net.0 is the first layer the artifact bins hit
and the layer whose weights receive the destructive update.

Fix: artifact rejection as in every BCI pipeline: drop bins whose population count exceeds a
threshold (here any bin with a channel z-score above 10) before the update. Everything else,
including the clean data and the optimiser, is unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Utah-array BCI decoding practice (e.g. Glaser et al. 2020 Neural_Decoding; BrainGate "
          "artifact rejection of high-population-count bins): stimulation/motion artifacts cause "
          "threshold crossings on all channels and wreck online SGD decoders")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    n_ch = 96
    hid = [128, 96, 160][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.02, 0.015, 0.03][seed % 3]
    bs = [64, 48, 80][seed % 3]
    steps = 200
    art_step = [23, 41, 32][seed % 3]
    dt = 0.05

    pd = torch.rand(n_ch, generator=g) * 2 * math.pi          # preferred directions
    base = 5 + 35 * torch.rand(n_ch, generator=g)              # Hz
    mod = base * (0.3 + 0.5 * torch.rand(n_ch, generator=g))
    speed_gain = 0.5 + torch.rand(n_ch, generator=g)

    def sample(n):
        ang = torch.rand(n, generator=g) * 2 * math.pi
        sp = torch.rand(n, generator=g) * 1.5
        vel = torch.stack([sp * torch.cos(ang), sp * torch.sin(ang)], 1)
        rate = base + mod * sp[:, None] * speed_gain * torch.cos(ang[:, None] - pd)
        counts = torch.poisson(rate.clamp_min(0.5) * dt, generator=g)
        return counts, vel

    cal_x, cal_v = sample(4000)
    mu, sd = cal_x.mean(0), cal_x.std(0) + 1e-3
    vmu, vsd = cal_v.mean(0), cal_v.std(0)

    batches = []
    for s in range(steps):
        x, v = sample(bs)
        if s == art_step:
            n_art = bs // 2
            x[:n_art] = torch.poisson(torch.full((n_art, n_ch), 50.0), generator=g)
        z = (x - mu) / sd
        y = (v - vmu) / vsd
        if fixed:
            keep = z.max(1).values < 10.0
            z, y = z[keep], y[keep]
        batches.append((z, y))

    torch.manual_seed(seed)
    layers, d = [], n_ch
    for _ in range(depth):
        layers += [nn.Linear(d, hid), nn.ReLU()]
        d = hid
    layers.append(nn.Linear(d, 2))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
