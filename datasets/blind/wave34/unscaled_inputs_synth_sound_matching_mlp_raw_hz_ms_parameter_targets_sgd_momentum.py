"""Synthesizer sound matching (inverse synthesis): an MLP maps a summary of the rendered patch
(per-band log energies and spectral statistics) to the synth parameters that produced it -
filter cutoff, oscillator detune, attack, decay/release and LFO rate; MSE; SGD + momentum.

Mechanism: the regression targets are the raw parameter values as exported from the plugin's
preset dump - cutoff in Hz (200-12000), detune in cents, attack/decay/release in ms (1-2000) and
the LFO rate in Hz - and the features include the spectral centroid in Hz. Nothing is
standardised. The MSE starts at ~1e6-1e7 and its gradient with respect to the output layer and
to the first-layer weights of the centroid feature is of the same order; with an SGD step size
that is ordinary for standardised data, the first update multiplies those weights by orders of
magnitude, the next loss is ~1e26 and the one after is inf.

ORIGIN: `net.0`, the first Linear layer, which receives the un-normalised centroid feature (the
target scale is the larger part of the problem and has no module; this is where the unscaled
data first enters the model).

Fix: standardise the features and the targets with training-set mean/std (predictions can be
mapped back) - nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Yee-King, Fedden & d'Inverno 2018 'Automatic programming of VST sound synthesizers "
          "using deep networks' and Esling et al. 2020 FlowSynth normalise parameters to [0, 1]; "
          "training on raw Hz/ms preset values gives a huge MSE that diverges with SGD (common "
          "'loss is inf/nan after 2 iterations' threads for unscaled regression targets).")

N_BANDS = 24


def _render(g, B):
    lo = torch.tensor([200.0, -50.0, 1.0, 20.0, 20.0, 0.1])
    hi = torch.tensor([12000.0, 50.0, 800.0, 2000.0, 2000.0, 12.0])
    u = torch.rand(B, 6, generator=g)
    u[:, 0] = u[:, 0] ** 2
    p = lo + (hi - lo) * u  # cutoff Hz, detune cents, attack ms, decay ms, release ms, lfo Hz
    centres = torch.logspace(2, 4.2, N_BANDS)
    band_db = -12 * torch.relu(torch.log2(centres[None] / p[:, :1]))
    band_db = band_db + 3 * torch.log1p(p[:, 1:2].abs()) * 0.2 + 0.5 * torch.randn(B, N_BANDS, generator=g)
    centroid = (centres[None] * torch.softmax(band_db / 6, 1)).sum(1, keepdim=True)
    env = torch.stack([torch.log(p[:, 2]), torch.log(p[:, 3]), torch.log(p[:, 4]),
                       torch.sin(p[:, 5]), torch.cos(p[:, 5]), p[:, 5] / 12], 1)
    feats = torch.cat([band_db / 10, centroid, env], 1)
    return feats, p


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(16000 + seed)
    hidden = [128, 64, 192][seed % 3]
    depth = [2, 3, 2][seed % 3]
    B = [32, 64, 48][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    d_in = N_BANDS + 1 + 6
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.ReLU()]
        d = hidden
    layers += [nn.Linear(d, 6)]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    batches = [_render(g, B) for _ in range(steps)]
    if fixed:
        fx, fy = _render(torch.Generator().manual_seed(16500 + seed), 2048)
        mx, sx = fx.mean(0), fx.std(0) + 1e-6
        my, sy = fy.mean(0), fy.std(0) + 1e-6
        batches = [((x - mx) / sx, (y - my) / sy) for x, y in batches]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
