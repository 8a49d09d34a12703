"""Vancomycin therapeutic-drug-monitoring model fed raw clinical units.

Mechanism: a two-branch dosing model -- an MLP over patient covariates (weight in kg, age
in years, serum creatinine in umol/L, creatinine clearance in mL/min, daily dose in mg) and a
GRU over the recent dosing history (amount in mg, hours since dose) -- predicts the 24-h AUC
in mg*h/L (values of several hundred). Nothing is standardised: covariates of 10^2-10^3 make
the first ReLU layer's activations hundreds large, targets of ~500 make the MSE ~10^5 from
step 0, and the SGD update on the covariate branch (lr * |h|^2 >> 2) overshoots and diverges
to inf/NaN within a few steps.

ORIGIN: ``covariates.0`` -- the first linear layer, which receives the raw-unit covariates.

Fix: standardise every input feature and the AUC target with training-set mean/std (the
usual StandardScaler step); architecture, optimiser and lr unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "covariates.0"
SOURCE = ("Model-informed precision dosing / ML vancomycin AUC prediction papers and Kaggle-style "
          "TDM notebooks; the classic 'loss is nan after a few iterations' report when raw "
          "clinical units (mg, mL/min, umol/L) are fed to a network without StandardScaler.")


class TDMNet(nn.Module):
    def __init__(self, n_cov, hid):
        super().__init__()
        self.covariates = nn.Sequential(nn.Linear(n_cov, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU())
        self.history = nn.GRU(2, hid, batch_first=True)
        self.head = nn.Linear(2 * hid, 1)

    def forward(self, cov, doses):
        _, h = self.history(doses)
        return self.head(torch.cat([self.covariates(cov), h[-1]], 1)).squeeze(1)


def simulate(g, n):
    weight = 50 + 50 * torch.rand(n, generator=g)              # kg
    age = 18 + 72 * torch.rand(n, generator=g)                 # years
    scr = 50 + 200 * torch.rand(n, generator=g)                # umol/L
    crcl = (140 - age) * weight / (0.815 * scr)                # Cockcroft-Gault, mL/min
    daily = 1000 + 1000 * torch.randint(0, 4, (n,), generator=g).float()  # mg/day
    cov = torch.stack([weight, age, scr, crcl, daily], 1)
    interval = 12.0
    n_doses = 6
    t_since = torch.arange(n_doses - 1, -1, -1).float()[None] * interval + 2 * torch.rand(n, 1, generator=g)
    amt = (daily / 2)[:, None] * (1 + 0.1 * torch.randn(n, n_doses, generator=g))
    doses = torch.stack([amt, t_since], 2)
    cl = 0.05 * crcl + 0.5                                     # L/h, mostly renal clearance
    auc = amt.sum(1) / n_doses * 2 / cl * (1 + 0.08 * torch.randn(n, generator=g))  # mg*h/L
    return cov, doses, auc


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    hid = [32, 48, 24][seed % 3]
    lr = [3e-3, 2e-3, 5e-3][seed % 3]
    bsz = [32, 64, 48][seed % 3]
    steps = 150
    cov, doses, auc = simulate(g, steps * bsz)
    if fixed:
        cov = (cov - cov.mean(0)) / cov.std(0)
        doses = (doses - doses.mean((0, 1))) / doses.std((0, 1))
        auc = (auc - auc.mean()) / auc.std()
    batches = []
    for i in range(steps):
        s = slice(i * bsz, (i + 1) * bsz)
        batches.append(((cov[s], doses[s]), auc[s]))
    model = TDMNet(cov.shape[1], hid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
