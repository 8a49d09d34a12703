"""CW-EPR spectrum -> spin-Hamiltonian parameter regressor: a ReLU MLP reads a first-derivative
nitroxide EPR spectrum (three hyperfine lines) and regresses the standardised centre field,
hyperfine coupling and linewidth (MSE, Adam). Spectra are scaled to a common amplitude using the
receiver gain stored in each acquisition's metadata.

Mechanism: one acquisition session (half of one batch, at a seed-dependent step early in the
run) was exported without its receiver-gain field, so the loader fell back to 0 dB instead of
the 80 dB used: those spectra are 1e4x too large. The single batch gives an MSE and gradients
many orders of magnitude above normal; Adam's second-moment estimate v absorbs g^2 of that batch
and, with beta2 = 0.999, keeps it for thousands of steps. Every later update m/sqrt(v) is then
~1e-3..1e-6 of its normal size: the weights barely move again and the loss stays at its early
level for the rest of the run (no NaN, a silent stall).

ORIGIN: "net.0", the first Linear: it is the layer the corrupt spectra hit and where the
1e4x input scale turns into the huge gradient (the fault itself is in the data).
Fix: filter the batch - drop spectra whose amplitude is far outside the physical range
(|x| > 50 after gain normalisation) before the step.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Missing/incorrect receiver-gain metadata in Bruker EPR exports (common user "
          "report); ML parameter estimation from CW-EPR spectra; known pattern: one extreme "
          "batch inflates Adam's second moment (beta2=0.999) and freezes learning")

N_PTS = 200


def _spectra(g, bs):
    b = torch.linspace(-1, 1, N_PTS)
    p = torch.rand(bs, 3, generator=g)                       # centre, A, width in [0,1]
    c = -0.2 + 0.4 * p[:, :1]
    a = 0.25 + 0.25 * p[:, 1:2]
    w = 0.03 + 0.05 * p[:, 2:3]
    spec = torch.zeros(bs, N_PTS)
    for m in (-1, 0, 1):
        u = (b - c - m * a) / w
        spec = spec + (-2 * u / (1 + u ** 2) ** 2)             # derivative Lorentzian
    spec = spec + 0.05 * torch.randn(bs, N_PTS, generator=g)
    y = (p - 0.5) / 0.2887                                       # standardised parameters
    return spec, y


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(400 + seed)
    width = [128, 96, 64][seed % 3]
    depth = 2
    bs = [32, 48, 40][seed % 3]
    lr = [1e-3, 1.2e-3, 1.5e-3][seed % 3]
    steps = 150
    bad_step = [3, 4, 5][seed % 3]
    batches = []
    for s in range(steps):
        x, y = _spectra(g, bs)
        if s == bad_step:
            rows = torch.arange(bs) < bs // 2
            x[rows] = x[rows] * 1.0e4
            if fixed:
                keep = x.abs().amax(1) <= 50.0
                x, y = x[keep], y[keep]
        batches.append((x, y))
    layers, d = [], N_PTS
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 3))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
