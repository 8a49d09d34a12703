"""Multi-task regression with homoscedastic uncertainty weighting (Kendall, Gal & Cipolla 2018,
learned s_i = log sigma_i^2) for a compressor-station soft sensor: a shared tanh ("tansig")
trunk and three heads.  The process inputs reach the trunk in logged SI units.

Mechanism: the three targets (efficiency, outlet temperature, vibration RMS) are
standardised, so the loss starts at a normal ~1.5, but the six inputs are passed as logged:
absolute suction/discharge pressures in Pa (~1e5 and ~4e5), temperatures in K, shaft speed in
rpm, flow in kg/h.  The first Linear of the trunk produces pre-activations of order 1e4-1e5,
dominated by the pressure terms whose +-5-10% operating variation never changes their sign.
Essentially every first-layer Tanh sits at exactly +-1 for every sample: the trunk output
is (almost) the same vector for all inputs and tanh' = 0 blocks all gradient to the first
layer.  The heads can only fit the target means, each task loss stays at ~1 (the variance
of a standardised target), the uncertainty weights stay at s ~ 0, and the weighted loss is flat.

ORIGIN: `trunk.1`, the first Tanh of the shared trunk, which saturates.

Fix: z-score the inputs with the training statistics (the input normalisation MATLAB's
mapminmax did in the original model); the pre-activations are then O(1).
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "trunk.1"
SOURCE = ("Kendall, Gal & Cipolla 2018 'Multi-Task Learning Using Uncertainty to Weigh Losses'; "
          "soft-sensor ports of MATLAB 'tansig' networks that drop the mapminmax input "
          "processing; forum threads on tanh layers saturating on raw Pa / K inputs")


class UncertaintyWeights(nn.Module):
    def __init__(self, n_tasks):
        super().__init__()
        self.log_var = nn.Parameter(torch.zeros(n_tasks))

    def forward(self):
        return self.log_var


class SoftSensor(nn.Module):
    def __init__(self, d_in, width, n_tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, width), nn.Tanh(),
                                   nn.Linear(width, width), nn.Tanh())
        self.heads = nn.ModuleList([nn.Linear(width, 1) for _ in range(n_tasks)])
        self.weights = UncertaintyWeights(n_tasks)

    def forward(self, x):
        h = self.trunk(x)
        return torch.cat([hd(h) for hd in self.heads], dim=1), self.weights()


def uncertainty_loss(out, y):
    pred, log_var = out
    task_losses = ((pred - y) ** 2).mean(0)
    return (0.5 * torch.exp(-log_var) * task_losses + 0.5 * log_var).sum()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=64, bs=64, steps=150, lr=2e-3),
           dict(width=96, bs=48, steps=130, lr=1e-3),
           dict(width=48, bs=96, steps=170, lr=3e-3)][seed % 3]
    g = torch.Generator().manual_seed(73 + seed)
    n = cfg["bs"] * cfg["steps"]
    u = torch.rand(n, 6, generator=g)
    p_suc = 0.95e5 + 0.15e5 * u[:, 0]          # Pa
    p_dis = 3.6e5 + 0.8e5 * u[:, 1]            # Pa
    t_suc = 288 + 25 * u[:, 2]                 # K
    t_amb = 270 + 40 * u[:, 3]                 # K
    speed = 9000 + 3000 * u[:, 4]              # rpm
    flow = 1.2e4 + 0.8e4 * u[:, 5]             # kg/h
    X = torch.stack([p_suc, p_dis, t_suc, t_amb, speed, flow], 1)
    ratio = p_dis / p_suc
    eff = 0.85 - 0.3 * (ratio - 4.3) ** 2 / 4 - 0.05 * ((speed - 10500) / 1500) ** 2
    t_out = t_suc * ratio ** 0.2857 / eff.clamp_min(0.3) - 0.1 * (t_amb - 290)
    vib = torch.sin((speed - 9000) / 600) + 0.5 * ((flow - 1.6e4) / 4e3) ** 2
    Y = torch.stack([eff, t_out, vib], 1)
    Y = Y + 0.05 * Y.std(0) * torch.randn(n, 3, generator=g)
    Y = (Y - Y.mean(0)) / Y.std(0)
    if fixed:
        X = (X - X.mean(0)) / X.std(0)
    bs = cfg["bs"]
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(cfg["steps"])]

    torch.manual_seed(seed)
    model = SoftSensor(6, cfg["width"], 3)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=uncertainty_loss, batches=batches,
                steps=cfg["steps"])
