"""Motor-cortex kinematics decoder in the style of Glaser et al. 2020 ('Machine learning for
neural decoding'): an MLP ("feedforward net" decoder) takes the firing rates of 64-96 M1 units in
the previous 6-10 bins (flattened lags) and predicts the current 2-D hand velocity, trained with
SGD + momentum on MSE.

Mechanism: the Neural_Decoding pipeline z-scores the inputs and zero-centres the outputs; here the
rates went in as raw Hz (means 5-60 Hz, all positive, hundreds of lagged features) and the
targets as raw hand velocity in mm/s (+-300). The first forward pass already gives an MSE of
~1e4-1e5, the input Gram matrix has a huge top eigenvalue (the all-positive mean direction,
~n_features * mean_rate^2), so an lr that is ordinary for standardised data is orders of magnitude
beyond the stability limit: the first updates overshoot, the weights and loss grow geometrically
and within a few steps the loss is inf/NaN.

ORIGIN = "net.0": the first nn.Linear, which receives the un-normalised rates; the divergence
starts in its weight update (its gradient is scaled by the raw inputs).

Fix: standardise as the pipeline intends: z-score inputs with training-set mean/std and z-score
the velocity targets. Same model, lr, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Glaser et al. 2020 eNeuro 'Machine learning for neural decoding' (KordingLab "
          "Neural_Decoding: z-score X, zero-centre y); common reports of decoders diverging or "
          "producing NaN on raw firing rates / raw kinematics")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(18000 + seed)
    n_units = [64, 96, 80][seed % 3]
    lags = [6, 10, 8][seed % 3]
    hid = [128, 96, 160][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [1e-2, 2e-2, 1.5e-2][seed % 3]
    steps = 150
    dt = 0.05
    base = 5 + 55 * torch.rand(n_units, generator=g)
    pd = torch.rand(n_units, generator=g) * 2 * math.pi
    depth = base * (0.3 + 0.5 * torch.rand(n_units, generator=g))

    def sample(m):
        # smooth reach velocity over lags+1 bins
        ang = torch.rand(m, 1, generator=g) * 2 * math.pi + 0.2 * torch.randn(m, lags + 1, generator=g).cumsum(1)
        sp = 150 + 150 * torch.rand(m, 1, generator=g)  # mm/s
        vel = torch.stack([sp * torch.cos(ang), sp * torch.sin(ang)], -1)  # (m, lags+1, 2)
        vang = torch.atan2(vel[..., 1], vel[..., 0])
        rate = base + depth * (sp / 300.0).unsqueeze(-1) * torch.cos(vang.unsqueeze(-1) - pd)
        counts = torch.poisson(rate.clamp_min(0.1) * dt, generator=g)
        x = (counts[:, :lags] / dt).flatten(1)  # rates in Hz
        return x, vel[:, -1]

    cx, cy = sample(5000)
    mu, sd = cx.mean(0), cx.std(0) + 1e-3
    ymu, ysd = cy.mean(0), cy.std(0)
    batches = []
    for _ in range(steps):
        x, y = sample(bs)
        if fixed:
            x, y = (x - mu) / sd, (y - ymu) / ysd
        batches.append((x, y))
    torch.manual_seed(seed)
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(nn.Linear(n_units * lags, hid), nn.ReLU(),
                                          nn.Linear(hid, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
