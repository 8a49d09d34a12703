"""AIS track autoencoder for vessel-behaviour anomaly detection: 32-report windows of a track
(standardised d_lat, d_lon, SOG, sin/cos COG, turn rate) are flattened and compressed by an
MLP encoder into a small code, decoded back, and the reconstruction error is the anomaly
score; MSE reconstruction loss, Adam.

Mechanism: the code layer is ``Linear -> ReLU`` (the practitioner wanted a non-negative,
'sparse' code) and only 3-5 units wide, and Adam runs at lr 3e-2 to 3.5e-2 (kept from a sweep done
on a wide linear code). Each code unit is a single
point of failure: one large Adam step (per-parameter steps of ~lr regardless of gradient
size) that pushes a unit's pre-activation below zero for every window kills it, and a dead
unit gets exactly zero gradient forever. With so few units all of them die within the first
tens of steps, the decoder then sees a constant code and can only output the mean window,
and the reconstruction loss sits at the data variance -- a stall with no NaN.

ORIGIN = "code.0": the Linear feeding the bottleneck ReLU (code.1) is where units die; the
encoder below still has live ReLUs but is cut off from the loss by the dead code.

Fix: LeakyReLU(0.1) on the code layer (dead code units keep a gradient and recover); same
width, lr, optimiser and data.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "code.0"
SOURCE = ("AIS trajectory autoencoders for maritime anomaly detection (e.g. GeoTrackNet-style "
          "pipelines); Keras/PyTorch forum reports of ReLU bottleneck codes collapsing to all "
          "zeros ('autoencoder outputs the mean', dying ReLU in the latent layer)")


def _tracks(g, n, T=32):
    # mixture of behaviours: transit (straight), fishing (zig-zag), manoeuvring (turns)
    kind = torch.randint(0, 3, (n,), generator=g)
    t = torch.linspace(0, 1, T)
    sog = torch.where(kind == 0, 12.0, torch.where(kind == 1, 3.5, 7.0)).unsqueeze(1) \
        + torch.randn(n, 1, generator=g) + 0.3 * torch.randn(n, T, generator=g)
    turn_amp = torch.where(kind == 0, 0.05, torch.where(kind == 1, 1.2, 0.5)).unsqueeze(1)
    freq = 2 + 4 * torch.rand(n, 1, generator=g)
    cog = 6.28 * torch.rand(n, 1, generator=g) + turn_amp * torch.sin(6.28 * freq * t + 6.28 * torch.rand(n, 1, generator=g))
    rot = torch.diff(cog, dim=1, prepend=cog[:, :1]) * T
    dlat, dlon = sog * torch.cos(cog) / 60, sog * torch.sin(cog) / 60
    f = torch.stack([dlat, dlon, sog, torch.sin(cog), torch.cos(cog), rot], 2)
    f = (f - f.mean((0, 1))) / f.std((0, 1))
    return f.reshape(n, -1)


class TrackAE(nn.Module):
    def __init__(self, d, hidden, code, leaky):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden // 2), nn.ReLU())
        self.code = nn.Sequential(nn.Linear(hidden // 2, code), nn.LeakyReLU(0.1) if leaky else nn.ReLU())
        self.dec = nn.Sequential(nn.Linear(code, hidden // 2), nn.ReLU(), nn.Linear(hidden // 2, hidden),
                                 nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, x):
        return self.dec(self.code(self.enc(x)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(6000 + seed)
    hidden = [128, 96, 160][seed % 3]
    code = [4, 3, 5][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [3e-2, 3.5e-2, 3e-2][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    x = _tracks(g, steps * bs)
    model = TrackAE(x.shape[1], hidden, code, leaky=fixed)
    batches = [(x[i * bs:(i + 1) * bs], x[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
