"""SIREN neural field fitting a 2-D vorticity snapshot (Lamb-Oseen vortices) from pixel
coordinates. The hidden sine layers compute sin(omega_0 * (W x + b)) with omega_0 = 30, but
their weights are drawn from U(-sqrt(6/n), sqrt(6/n)) as in the paper's Sec. 3.2 sentence,
without the 1/omega_0 factor. Every hidden pre-activation is ~30x too wide, the input-output
Jacobian gains ~30x per layer, and the field is white noise at pixel scale from step 0:
Adam cannot fit it and the loss stays at the (unit) signal variance.
fixed=True: hidden weights drawn from U(-sqrt(6/n)/omega_0, sqrt(6/n)/omega_0).
"""
import math

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.1"
SOURCE = ("SIREN (Sitzmann et al. 2020) Sec. 3.2 vs supplement 1.5: hidden init must be "
          "U(+-sqrt(6/n)/omega_0); confusion reported in vsitzmann/siren#57, #55 and "
          "lucidrains/siren-pytorch#1 (wrong init converges far worse).")

OMEGA_0 = 30.0


class SineLayer(nn.Linear):
    def __init__(self, n_in, n_out, is_first, correct_init):
        super().__init__(n_in, n_out)
        self.is_first = is_first
        with torch.no_grad():
            if is_first:
                bound = 1.0 / n_in
            elif correct_init:
                bound = math.sqrt(6.0 / n_in) / OMEGA_0
            else:
                bound = math.sqrt(6.0 / n_in)  # omega_0 divisor forgotten
            self.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(OMEGA_0 * super().forward(x))


class Siren(nn.Module):
    def __init__(self, hidden, n_hidden, correct_init):
        super().__init__()
        layers = [SineLayer(2, hidden, True, correct_init)]
        for _ in range(n_hidden):
            layers.append(SineLayer(hidden, hidden, False, correct_init))
        final = nn.Linear(hidden, 1)
        with torch.no_grad():
            b = math.sqrt(6.0 / hidden) / OMEGA_0
            final.weight.uniform_(-b, b)
            final.bias.zero_()
        layers.append(final)
        self.net = nn.Sequential(*layers)

    def forward(self, coords):
        return self.net(coords).squeeze(-1)


def _vorticity_field(res, g):
    lin = torch.linspace(-1, 1, res)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    w = torch.zeros(res, res)
    for _ in range(6):
        cx, cy = (torch.rand(2, generator=g) * 1.6 - 0.8).tolist()
        gamma = (torch.rand(1, generator=g).item() * 2 - 1) * 1.5
        r0 = 0.08 + 0.15 * torch.rand(1, generator=g).item()
        w += gamma * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / r0 ** 2)
    w += 0.2 * torch.sin(6 * xx) * torch.cos(5 * yy)
    coords = torch.stack([xx, yy], -1).reshape(-1, 2)
    return coords, w.reshape(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    coords, vort = _vorticity_field(64, g)
    vort = (vort - vort.mean()) / vort.std()
    steps, bs = 300, 1024
    batches = []
    for _ in range(steps):
        idx = torch.randperm(coords.shape[0], generator=g)[:bs]
        batches.append((coords[idx], vort[idx]))
    model = Siren(hidden=96, n_hidden=3, correct_init=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
