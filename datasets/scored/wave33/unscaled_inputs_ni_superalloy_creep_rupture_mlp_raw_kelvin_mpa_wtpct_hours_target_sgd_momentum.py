"""Creep-rupture life of Ni-base superalloys (NIMS creep data sheet style): an MLP takes the
alloy composition in wt.% (Cr, Co, Mo, W, Al, Ti, Ta, Nb, C, ... ~0-20), the solution and
ageing heat-treatment temperatures in kelvin (~1300-1550 K) and times in hours, and the test
temperature (K) and stress (MPa, 100-900), and regresses the rupture life in hours (10 to
~1e5). ReLU MLP, MSE, SGD with momentum.

Mechanism: nothing is standardised. The input columns span 1e-2 to 1.5e3 and the target spans
1e1 to 1e5 hours. At step 0 the hidden pre-activations are in the hundreds, the prediction is
~1e2 while targets are ~1e3-1e5, so the MSE is ~1e4-1e9 and its gradient w.r.t. the first-
layer weights is (error ~1e4) x (input ~1e3) ~ 1e7-1e8 per unit of lr. The very first SGD steps
throw the weights to 1e3-1e6, the next forward is larger still, and the loss reaches inf / NaN
within a few steps.

ORIGIN: `net.0`, the first Linear, which receives the raw kelvin / MPa / hours columns and
whose gradient is scaled by them.

Fix: standardise every input column and regress the standardised log10 rupture life (the
usual Larson-Miller-style practice); same model, optimizer, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Known pattern: raw physical units (K, MPa, hours) fed to an MLP and raw hours as the "
          "target give a huge initial loss and divergence (sklearn / PyTorch FAQ 'standardise "
          "features'; forum 'loss is nan regression large targets'); ML creep-life models on NIMS "
          "superalloy data (e.g. Liu et al. 2020, Acta Mater.; Shin et al. 2017).")


class CreepMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, c = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(c, width), nn.ReLU()]
            c = width
        layers.append(nn.Linear(c, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _creep(g, n):
    comp = torch.rand(n, 10, generator=g) * torch.tensor([20, 15, 8, 10, 6, 4, 8, 3, 0.15, 3.0])
    T_sol = 1350 + 200 * torch.rand(n, 1, generator=g)
    t_sol = 1 + 7 * torch.rand(n, 1, generator=g)
    T_age = 1100 + 150 * torch.rand(n, 1, generator=g)
    t_age = 4 + 20 * torch.rand(n, 1, generator=g)
    T = 1000 + 300 * torch.rand(n, 1, generator=g)
    S = 100 + 800 * torch.rand(n, 1, generator=g)
    x = torch.cat([comp, T_sol, t_sol, T_age, t_age, T, S], 1)
    strength = 0.02 * comp[:, 3] + 0.03 * comp[:, 6] + 0.04 * comp[:, 4] - 0.01 * comp[:, 0]
    # Larson-Miller: LMP = T (C + log10 t_r) decreasing with stress
    lmp = 26000 + 3000 * strength - 9.0 * S.squeeze(1)
    log_tr = lmp / T.squeeze(1) - 20.0
    log_tr = log_tr.clamp(1.0, 5.0) + 0.1 * torch.randn(n, generator=g)
    return x, log_tr


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [2, 3, 2][seed % 3]
    width = [64, 32, 128][seed % 3]
    lr = [1e-2, 5e-3, 2e-2][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = CreepMLP(16, width, depth)
    x, log_tr = _creep(g, 3000)
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
        y = (log_tr - log_tr.mean()) / log_tr.std()
    else:
        y = 10.0 ** log_tr                      # rupture life in hours
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
