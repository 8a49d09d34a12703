"""Curriculum learning with transfer-scored difficulty and exponential pacing (Hacohen &
Weinshall 2019) for a wind-turbine power-curve MLP; a handful of SCADA rows logged power in
W instead of kW, and the difficulty sort puts exactly those rows at the very end.

Mechanism: difficulty = squared residual of a reference (ridge) model fitted once on the whole
training set; the examples are sorted easy -> hard and at step t the batch is drawn from the
easiest pacing(t) fraction (exponential pacing, starting at a few percent).  About 1% of rows
are corrupt (target x1000, unit mix-up in the export).  They have by far the largest reference
residuals, so the curriculum hides them for most of the run and releases all of them when the
pacing reaches 100%: from then on most batches contain a row whose standardised target is
~1000 sigma off.  The MSE of those batches is ~1e5x the clean loss, SGD-with-momentum takes
giant steps and the run ends diverged (huge or non-finite loss in the last phase).

ORIGIN: None -- corrupt rows in the data, not a module.

Fix: filter the unit-mix-up rows (targets far outside the physical power range) before
scoring the curriculum; the pacing, the model and the optimiser are unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Hacohen & Weinshall 2019 'On the power of curriculum learning' (transfer scoring, "
          "exponential pacing); wind SCADA data-cleaning reports of W/kW unit mix-ups; the known "
          "pitfall that loss-based difficulty ranks corrupt/mislabeled samples as 'hardest'")


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(N=3000, bs=64, steps=150, hidden=64, lr=0.02, start=0.06, inc=1.8, step_len=25),
           dict(N=2400, bs=48, steps=120, hidden=48, lr=0.03, start=0.08, inc=2.0, step_len=22),
           dict(N=3600, bs=80, steps=180, hidden=96, lr=0.015, start=0.05, inc=1.7, step_len=28)][seed % 3]
    g = torch.Generator().manual_seed(900 + seed)
    N = cfg["N"]
    # features: wind speed, direction (sin/cos), air density, turbulence intensity, yaw error
    ws = 3 + 12 * torch.rand(N, generator=g)
    wd = 2 * math.pi * torch.rand(N, generator=g)
    rho = 1.225 + 0.05 * torch.randn(N, generator=g)
    ti = 0.05 + 0.15 * torch.rand(N, generator=g)
    yaw = 8 * torch.randn(N, generator=g)
    power = 2000 / (1 + torch.exp(-(ws - 9.0) / 1.3)) * (rho / 1.225) * torch.cos(yaw / 57.3) ** 2
    power = power * (1 - 0.8 * ti * (ws > 10).float()) + 40 * torch.randn(N, generator=g) * (1 + 3 * ti)
    X = torch.stack([ws, torch.sin(wd), torch.cos(wd), rho, ti, yaw], 1)
    X = (X - X.mean(0)) / X.std(0)
    mu, sd = power.mean(), power.std()
    y = (power - mu) / sd
    n_bad = N // 100
    bad = torch.randperm(N, generator=g)[:n_bad]
    y_raw = y.clone()
    y_raw[bad] = (power[bad] * 1000 - mu) / sd          # logged in W, standardised with kW stats

    # transfer scoring: ridge reference model on polynomial features of the (unfiltered) set
    Phi = torch.cat([X, X ** 2, X[:, :1] ** 3, torch.ones(N, 1)], 1)
    A = Phi.T @ Phi + 1e-2 * torch.eye(Phi.shape[1])
    w = torch.linalg.solve(A, Phi.T @ y_raw)
    difficulty = (Phi @ w - y_raw) ** 2
    order = torch.argsort(difficulty)
    if fixed:
        keep = y_raw[order].abs() < 10                    # physical-range filter drops W rows
        order = order[keep]

    batches = []
    for t in range(cfg["steps"]):
        frac = min(1.0, cfg["start"] * cfg["inc"] ** (t // cfg["step_len"]))
        pool = order[:max(cfg["bs"], int(math.ceil(frac * N)))]
        idx = pool[torch.randint(0, len(pool), (cfg["bs"],), generator=g)]
        batches.append((X[idx], y_raw[idx][:, None]))

    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, cfg["hidden"]), nn.ReLU(),
                          nn.Linear(cfg["hidden"], cfg["hidden"]), nn.ReLU(),
                          nn.Linear(cfg["hidden"], 1))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches,
                steps=cfg["steps"])
