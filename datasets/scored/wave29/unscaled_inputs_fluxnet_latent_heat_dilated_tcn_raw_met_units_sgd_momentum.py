"""Eddy-covariance latent-heat (evapotranspiration) gap-filling TCN fed raw FLUXNET units.

Mechanism: a flux-tower gap-filling model predicts half-hourly latent heat flux LE (W m-2) from
the preceding 48 half-hours of meteorology with a dilated causal 1-D CNN (TCN).  The columns go
in straight from the FLUXNET2015 CSV: net radiation and incoming shortwave in W m-2 (0-900),
VPD in hPa (0-40), air temperature in deg C, friction velocity, soil water content in %, and
the target LE in W m-2 (-50 to 600).  Nothing is standardised.  Pre-activations are in the
hundreds, the MSE on targets of hundreds of W m-2 is ~1e4 at step 0, and its gradients
are correspondingly enormous: the first SGD+momentum update (lr chosen for unit-scale data)
throws the weights far away, the next loss is orders of magnitude larger, and within a few
steps it overflows to inf/NaN.

ORIGIN: ``tcn.0`` -- the first convolution is where the raw-unit inputs enter and where the
activation scale is first far from O(1).

Fix: z-score every input channel and the target with training-set statistics (and predict the
standardised LE); same TCN, optimiser, lr, batches and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "tcn.0"
SOURCE = ("FLUXNET2015 half-hourly LE gap-filling with neural networks (Moffat et al. 2007; "
          "Besnard et al. 2019 LSTM/TCN flux models) fed raw CSV columns; 'loss is nan from the "
          "first epoch, forgot to normalise features/targets' reports (PyTorch forums, r/MachineLearning).")

WINDOW = 48


class Chomp(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return x[..., :-self.n]


class FluxTCN(nn.Module):
    def __init__(self, fin, width, levels):
        super().__init__()
        layers, c = [], fin
        for i in range(levels):
            d = 2 ** i
            layers += [nn.Conv1d(c, width, 3, dilation=d, padding=2 * d), Chomp(2 * d), nn.ReLU()]
            c = width
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.tcn(x)[..., -1]).squeeze(-1)


def _met(n, g):
    t = torch.arange(WINDOW).float()
    hour0 = torch.randint(0, 48, (n, 1), generator=g).float()
    hod = (hour0 + t[None]) % 48 / 2                                 # hour of day
    doy = torch.randint(60, 300, (n, 1), generator=g).float()
    sun = torch.clamp(torch.sin(torch.pi * (hod - 6) / 12), min=0) * torch.sin(torch.pi * (doy - 30) / 300)
    cloud = torch.rand(n, 1, generator=g)
    sw_in = 950 * sun * (1 - 0.7 * cloud) + 10 * torch.rand(n, WINDOW, generator=g)
    rn = 0.65 * sw_in - 60 + 10 * torch.randn(n, WINDOW, generator=g)
    ta = 8 + 12 * torch.sin(torch.pi * (doy - 60) / 240) + 6 * sun + torch.randn(n, WINDOW, generator=g)
    vpd = (6.1 * torch.exp(17.3 * ta / (ta + 237)) * (0.3 + 0.5 * sun)).clamp(0, 60)  # hPa
    ustar = 0.1 + 0.5 * torch.rand(n, 1, generator=g) + 0.05 * torch.randn(n, WINDOW, generator=g)
    swc = 10 + 30 * torch.rand(n, 1, generator=g) + 0.1 * torch.randn(n, WINDOW, generator=g)  # %
    x = torch.stack([sw_in, rn, ta, vpd, ustar, swc], dim=1)        # (n, 6, WINDOW)
    stress = torch.sigmoid((swc[:, -1] - 18) / 4)
    le = (0.55 * rn[:, -1] * stress / (1 + 0.03 * vpd[:, -1]) + 1.5 * vpd[:, -1] * ustar[:, -1] * 10
          + 15 * torch.randn(n, generator=g))
    return x, le


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(171 + seed)
    torch.manual_seed(seed)
    width = [32, 48, 24][seed % 3]
    levels = [4, 5, 4][seed % 3]
    batch = [64, 48, 96][seed % 3]
    lr = [0.01, 0.005, 0.02][seed % 3]
    steps = 150
    x, le = _met(steps * batch, g)
    if fixed:
        mu, sd = x.mean(dim=(0, 2), keepdim=True), x.std(dim=(0, 2), keepdim=True)
        x = (x - mu) / sd
        le = (le - le.mean()) / le.std()
    model = FluxTCN(6, width, levels)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(x[i * batch:(i + 1) * batch], le[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches, "steps": steps}
