"""Deeply-supervised 1D CNN regressing soil organic carbon from NIR spectra: model(spectra)
returns (main_pred, [aux_pred_1, aux_pred_2]) from heads on intermediate blocks and loss_fn adds
the main MSE and 0.3 x each auxiliary MSE.  The lab table codes missing measurements as -9999;
the loader standardises targets with statistics of the valid rows but does not drop the sentinel,
so one mid-run batch carries targets near -6000.  Its gradient throws the SGD+momentum weights far
off and the loss blows up to inf/NaN within a few steps.
fixed=True: the same data with the sentinel rows filtered out of that batch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Soil spectral libraries (e.g. KSSL / LUCAS exports) and many tabular sources encode missing "
          "lab values as -9999; forum reports of a loss that explodes mid-epoch traced to one batch with "
          "the sentinel; deep supervision heads as in DSN (Lee et al. 2015) / 1D-CNN spectroscopy models")

N_WAVE, BATCH, SENTINEL = 128, 32, -9999.0


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, 5, padding=2)
        self.bn = nn.BatchNorm1d(cout)
        self.pool = nn.MaxPool1d(2)

    def forward(self, x):
        return self.pool(F.relu(self.bn(self.conv(x))))


class AuxHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(c, 1)

    def forward(self, h):
        return self.fc(h.mean(-1)).squeeze(-1)


class DeeplySupervisedSpectraCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = ConvBlock(1, 16)
        self.block2 = ConvBlock(16, 32)
        self.block3 = ConvBlock(32, 64)
        self.aux1 = AuxHead(16)
        self.aux2 = AuxHead(32)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64 * (N_WAVE // 8), 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, spectra):
        h1 = self.block1(spectra)
        h2 = self.block2(h1)
        h3 = self.block3(h2)
        return self.head(h3).squeeze(-1), [self.aux1(h1), self.aux2(h2)]


def _make_batches(g, steps, bad_step, fixed):
    wl = torch.linspace(0, 1, N_WAVE)
    bands = torch.stack([torch.exp(-((wl - c) / 0.05) ** 2) for c in (0.2, 0.45, 0.6, 0.8)])  # absorption bands
    batches = []
    for s in range(steps):
        comp = torch.rand(BATCH, 4, generator=g)
        baseline = 0.3 * torch.rand(BATCH, 1, generator=g) + 0.2 * torch.rand(BATCH, 1, generator=g) * wl
        spectra = comp @ bands + baseline + 0.02 * torch.randn(BATCH, N_WAVE, generator=g)
        soc = 0.5 + 3.0 * comp[:, 1] + 1.0 * comp[:, 3] ** 2 + 0.1 * torch.randn(BATCH, generator=g)  # % SOC
        if s == bad_step:
            n_bad = int(torch.randint(1, 4, (1,), generator=g))
            soc[torch.randperm(BATCH, generator=g)[:n_bad]] = SENTINEL
        spectra = (spectra - 0.9) / 0.35                       # per-wavelength standardisation (approx.)
        y = (soc - 2.1) / 0.95                                  # stats computed on the valid rows only
        x = spectra.unsqueeze(1)
        if fixed and s == bad_step:
            keep = soc != SENTINEL
            x, y = x[keep], y[keep]
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    steps = 240
    bad_step = int(torch.randint(90, 170, (1,), generator=g))
    batches = _make_batches(g, steps, bad_step, fixed)
    torch.manual_seed(seed)
    model = DeeplySupervisedSpectraCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)

    def loss_fn(out, y):
        main, aux = out
        return F.mse_loss(main, y) + 0.3 * sum(F.mse_loss(a, y) for a in aux)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
