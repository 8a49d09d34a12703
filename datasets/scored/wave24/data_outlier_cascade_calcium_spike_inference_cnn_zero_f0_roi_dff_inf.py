"""CASCADE-style 1-D CNN that infers spike rates from two-photon calcium dF/F windows.

Mechanism: dF/F is computed per ROI in the usual Suite2p pipeline way:
Fc = clip(F - 0.7 * Fneu, 0, None); F0 = 8th percentile of Fc; dff = (Fc - F0) / F0.
All ROIs are fine except one ROI from a late-added session that sits on a blood vessel: its
neuropil is brighter than the soma, so after subtraction-and-clip most of its frames are exactly
0, the baseline percentile is 0, and its dF/F is 0/0 = NaN and x/0 = inf. Windows from that ROI
land in one minibatch (the step varies with the seed); every other batch is clean. The forward
pass on that batch turns the inf/NaN into a NaN loss and the run is non-finite from that step
on (Adam state and weights are poisoned).

ORIGIN = "net.0": the failure is in the data, not a layer; net.0 is the first layer the corrupt
batch hits and the first module whose output is non-finite.

Fix: sanitise the batch as a real pipeline does: drop windows that contain non-finite dF/F
(the bad ROI) before training. Model, optimiser, steps and all clean data are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Rupprecht et al. 2021 CASCADE spike inference; Suite2p F - 0.7*Fneu neuropil "
          "correction with percentile baseline: F0 = 0 for vessel/low-SNR ROIs gives inf/NaN "
          "dF/F (frequent Suite2p/CaImAn user reports of NaN dF/F traces)")


def simulate_roi(g, n_frames, fs, bad=False):
    rate = float(torch.empty(1).uniform_(0.3, 2.0, generator=g))  # Hz
    spikes = torch.poisson(torch.full((n_frames,), rate / fs), generator=g)
    tau = float(torch.empty(1).uniform_(0.4, 1.0, generator=g)) * fs
    amp = float(torch.empty(1).uniform_(0.4, 1.0, generator=g))
    kern = torch.exp(-torch.arange(0, int(5 * tau)).float() / tau)
    ca = torch.nn.functional.conv1d(spikes.view(1, 1, -1), kern.flip(0).view(1, 1, -1),
                                    padding=len(kern) - 1)[0, 0, :n_frames] * amp
    f0 = float(torch.empty(1).uniform_(150, 400, generator=g))
    fneu = 0.5 * f0 + 8 * torch.randn(n_frames, generator=g)
    contam = 0.7
    if bad:  # ROI on a blood vessel: dim soma, neuropil far brighter and less contaminating
        f0 = 60.0
        fneu = 480.0 + 8 * torch.randn(n_frames, generator=g)
        contam = 0.5
    F = contam * fneu + f0 * (1 + ca) + 6 * torch.randn(n_frames, generator=g)
    Fc = torch.clamp(F - 0.7 * fneu, min=0.0)
    base = torch.quantile(Fc, 0.08)
    dff = (Fc - base) / base
    # ground truth: Gaussian-smoothed spike rate (CASCADE target)
    sig = 0.2 * fs
    t = torch.arange(-int(3 * sig), int(3 * sig) + 1).float()
    gk = torch.exp(-0.5 * (t / sig) ** 2)
    gk = gk / gk.sum()
    sr = torch.nn.functional.conv1d(spikes.view(1, 1, -1), gk.view(1, 1, -1), padding=len(t) // 2)[0, 0]
    return dff, sr * fs / 5.0


def windows(dff, sr, idx, w):
    half = w // 2
    x = torch.stack([dff[i - half:i + half] for i in idx]).unsqueeze(1)
    y = sr[idx].unsqueeze(1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    fs = 30.0
    n_frames = 4000
    w = 64
    n_roi = 16
    bs = [64, 48, 96][seed % 3]
    lr = [1e-3, 2e-3, 7e-4][seed % 3]
    ch = [32, 24, 48][seed % 3]
    steps = 150
    bad_step = [37, 81, 112][seed % 3]
    rois = [simulate_roi(g, n_frames, fs) for _ in range(n_roi)]
    bad_roi = simulate_roi(g, n_frames, fs, bad=True)

    batches = []
    for s in range(steps):
        r = torch.randint(0, n_roi, (bs,), generator=g)
        idx = torch.randint(w, n_frames - w, (bs,), generator=g)
        xs, ys = [], []
        for k in range(bs):
            x, y = windows(*rois[int(r[k])], [int(idx[k])], w)
            xs.append(x); ys.append(y)
        x, y = torch.cat(xs), torch.cat(ys)
        if s == bad_step:
            nb = bs // 4
            bidx = torch.randint(w, n_frames - w, (nb,), generator=g).tolist()
            xb, yb = windows(*bad_roi, bidx, w)
            x[:nb], y[:nb] = xb, yb
            if fixed:  # pipeline QC: drop windows with non-finite dF/F
                keep = torch.isfinite(x).flatten(1).all(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))

    torch.manual_seed(seed)
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(
        nn.Conv1d(1, ch, 9, padding=4), nn.ReLU(),
        nn.Conv1d(ch, ch, 9, padding=4, stride=2), nn.ReLU(),
        nn.Conv1d(ch, ch, 5, padding=2, stride=2), nn.ReLU(),
        nn.Flatten(), nn.Linear(ch * (w // 4), 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
