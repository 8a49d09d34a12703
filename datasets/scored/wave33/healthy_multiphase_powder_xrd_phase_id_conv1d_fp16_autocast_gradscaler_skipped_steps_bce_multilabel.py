"""Phase identification in multi-phase powder XRD: a 1D CNN reads a simulated Cu-Kalpha pattern
(2theta 10-80 deg, 160 bins, intensities scaled to max = 1) of a mixture of up to 3 phases out
of a 12-phase library and predicts which phases are present (multi-label, BCE-with-logits,
one logit per phase). Conv1d -> GroupNorm -> ReLU blocks, max pooling, linear head. Trained in
mixed precision with `torch.autocast(dtype=float16)` and a working `GradScaler`, AdamW.

Why it looks suspicious but is healthy: the GradScaler is created with init_scale 2**28 (from a
recipe whose losses were tiny), so during the first ~12 steps the scaled fp16 gradients
overflow; the scaler detects the inf, SKIPS
those optimizer steps (the parameters do not move at all: exactly-zero updates) and halves the
scale until the gradients fit. Occasional skipped steps recur later when the scale is grown
back (every `growth_interval` steps). Gradients of the sparse, peak-dominated input are also
exactly zero for many conv weights in some steps. None of this is a failure: the loss is
always finite and falls as soon as the scale has settled.

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Common practice: torch.amp autocast(float16) + GradScaler, whose skipped steps on "
          "inf gradients are documented behaviour (PyTorch AMP docs / 'GradScaler skipping "
          "optimizer.step' forum threads); multi-phase XRD identification CNNs (Lee et al. 2020, "
          "Nat. Commun.; Szymanski et al. 2021 XRD-AutoAnalyzer).")


class XRDPhaseNet(nn.Module):
    def __init__(self, ch, n_blocks, n_phase):
        super().__init__()
        layers, c = [], 1
        for i in range(n_blocks):
            layers += [nn.Conv1d(c, ch, 7, padding=3), nn.GroupNorm(4, ch), nn.ReLU(), nn.MaxPool1d(2)]
            c = ch
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(ch, n_phase)

    def forward(self, x):
        return self.head(self.features(x).amax(-1))


def _library(g, n_phase, nb):
    lib = []
    for _ in range(n_phase):
        k = int(torch.randint(4, 9, (1,), generator=g))
        pos = torch.randint(5, nb - 5, (k,), generator=g)
        inten = 0.2 + 0.8 * torch.rand(k, generator=g)
        lib.append((pos, inten))
    return lib


def _patterns(g, lib, n, nb):
    two_t = torch.arange(nb).float()
    xs, ys = [], []
    for _ in range(n):
        m = int(torch.randint(1, 4, (1,), generator=g))
        phases = torch.randperm(len(lib), generator=g)[:m]
        pat = torch.zeros(nb)
        for p in phases.tolist():
            pos, inten = lib[p]
            frac = 0.3 + 0.7 * float(torch.rand(1, generator=g))
            shift = float(torch.randn(1, generator=g)) * 0.8          # lattice strain / zero shift
            for q, a in zip(pos.tolist(), inten.tolist()):
                pat += frac * a * torch.exp(-((two_t - q - shift) ** 2) / (2 * 1.2 ** 2))
        pat += 0.02 + 0.01 * torch.rand(nb, generator=g)
        pat = pat / pat.max()
        y = torch.zeros(len(lib))
        y[phases] = 1.0
        xs.append(pat)
        ys.append(y)
    return torch.stack(xs).unsqueeze(1), torch.stack(ys)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [24, 16, 32][seed % 3]
    n_blocks = [3, 4, 3][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [32, 24, 16][seed % 3]
    nb = 160
    n_phase = 12
    steps = 120
    torch.manual_seed(seed)
    model = XRDPhaseNet(ch, n_blocks, n_phase)
    lib = _library(g, n_phase, nb)
    x, y = _patterns(g, lib, 800, nb)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 28, growth_interval=30)
    loss_fn = nn.BCEWithLogitsLoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps,
            "amp_dtype": torch.float16, "scaler": scaler}
