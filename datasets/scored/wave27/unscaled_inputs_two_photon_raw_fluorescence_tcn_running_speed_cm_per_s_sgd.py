"""Behaviour decoding from two-photon calcium imaging: a small temporal CNN reads 1 s windows
(30 frames) of fluorescence traces from 64 ROIs and predicts the mouse's running speed on the
treadmill at the window end, trained with MSE and SGD with momentum.

Mechanism: the traces are fed as the raw Suite2p-style F values (neuropil-corrected photon
counts, baseline 300-3000 a.u. with transients of +50-300 %), not as dF/F or z-scores, and the
target is the raw speed in cm/s (0-60). The first conv layer's pre-activations are ~1e3-1e4, the
prediction is off by hundreds of cm/s from step 0, and the weight gradients scale with the raw
inputs (~1e3x the normalised case): with a learning rate that is sensible for normalised data the
first SGD steps overshoot by orders of magnitude, momentum compounds it and the loss goes to inf
/NaN within a few steps.

ORIGIN: "tcn.0", the first Conv1d: it is the module that receives the un-normalised fluorescence;
the scale problem starts at its input and its pre-activations are the first to be ~1e3x too large.

Fix: standardise inputs and targets: per-ROI dF/F z-scored with the session's statistics, speed
z-scored (mean/std of the session); model, loss, optimiser, lr and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "tcn.0"
SOURCE = ("Suite2p F.npy raw fluorescence fed directly to decoders ('always compute dF/F / "
          "z-score before decoding' in Suite2p/CaImAn docs); 'loss nan on the first epoch with "
          "unnormalised inputs' reports; running-speed decoding from V1 populations "
          "(Stringer et al. 2019)")


class SpeedTCN(nn.Module):
    def __init__(self, n_roi, ch, n_layers):
        super().__init__()
        layers, d = [], n_roi
        for i in range(n_layers):
            layers += [nn.Conv1d(d, ch, 5, padding=2 * 2 ** i, dilation=2 ** i), nn.ReLU()]
            d = ch
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Linear(ch, 1)

    def forward(self, x):
        return self.head(self.tcn(x)[:, :, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_roi, T = 64, 30
    ch = [32, 48, 64][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    batch = [32, 64, 48][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    steps = 120

    base = 300 + 2700 * torch.rand(n_roi, generator=g)        # ROI baseline fluorescence (a.u.)
    tuning = torch.randn(n_roi, generator=g)                   # running modulation per ROI
    kern = torch.exp(-torch.arange(10) / 3.0)
    torch.manual_seed(seed)
    model = SpeedTCN(n_roi, ch, n_layers)

    raw_x, raw_y = [], []
    for _ in range(steps):
        speed = torch.relu(torch.cumsum(4 * torch.randn(batch, T + 9, generator=g), 1) + 15)
        speed = speed.clamp(max=60)
        drive = torch.relu(tuning[None, :, None] * (speed[:, None, :] - 15) / 15 + 0.3)
        spikes = torch.poisson(drive.expand(batch, n_roi, T + 9).contiguous(), generator=g)
        ca = torch.nn.functional.conv1d(spikes.reshape(-1, 1, T + 9), kern.flip(0).view(1, 1, -1))
        ca = ca.reshape(batch, n_roi, T)
        F = base[None, :, None] * (1 + 0.6 * ca) + 20 * torch.randn(batch, n_roi, T, generator=g)
        raw_x.append(F)
        raw_y.append(speed[:, -1:])
    if fixed:
        allx = torch.cat(raw_x)
        f0 = allx.mean((0, 2), keepdim=True)
        dff = [(x - f0) / f0 for x in raw_x]
        mu, sd = torch.cat(dff).mean((0, 2), keepdim=True), torch.cat(dff).std((0, 2), keepdim=True)
        raw_x = [(d - mu) / sd for d in dff]
        ally = torch.cat(raw_y)
        raw_y = [(y - ally.mean()) / ally.std() for y in raw_y]
    batches = list(zip(raw_x, raw_y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
