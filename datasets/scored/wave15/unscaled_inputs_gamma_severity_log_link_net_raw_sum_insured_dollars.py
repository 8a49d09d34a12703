"""Claim-severity network with a log link (a "neural GLM"): an MLP over policy features outputs
log(mean claim cost) and is trained with the Gamma deviance, the standard severity loss.

Mechanism: the features were fed raw - sum insured in dollars (1e4-1e6), vehicle value in
dollars, driver age in years, licence years - instead of being standardised (log/z-scored).
The first Linear layer therefore produces pre-activations of order 1e4-1e5; the log-link head
output is tens of thousands and exp() overflows to inf at step 0 (deviance inf / NaN).

ORIGIN: 0, the first Linear layer, which receives the unscaled inputs.
Fix: standardise the features (log of dollar amounts, then z-score) - same network,
same Gamma deviance, same optimiser.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "0"
SOURCE = "Wüthrich & Merz 'Statistical Foundations of Actuarial Learning' (Gamma deviance, log link neural nets); unscaled dollar features"


def gamma_deviance(log_mu, y):
    mu = log_mu.exp()
    return (2 * (y / mu - torch.log(y / mu) - 1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=32, bs=64, lr=5e-3), dict(w=64, bs=32, lr=5e-3), dict(w=16, bs=128, lr=1e-2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1400 + seed)
    model = nn.Sequential(nn.Linear(4, cfg["w"]), nn.ReLU(), nn.Linear(cfg["w"], cfg["w"]), nn.ReLU(), nn.Linear(cfg["w"], 1), nn.Flatten(0))
    with torch.no_grad():
        model[4].bias.fill_(8.0)  # portfolio mean claim ~ $3000 on the log scale
    steps = 60
    batches = []
    for _ in range(steps):
        B = cfg["bs"]
        si = torch.exp(9.5 + 1.2 * torch.randn(B, generator=g))  # sum insured $
        veh = torch.exp(10.0 + 0.6 * torch.randn(B, generator=g))  # vehicle value $
        age = 18 + 60 * torch.rand(B, generator=g)
        lic = (age - 18) * torch.rand(B, generator=g)
        mu = torch.exp(8.0 + 0.7 * (torch.log(si) - 9.5) + 0.8 * (torch.log(veh) - 10) - 0.02 * (age - 45))
        y = mu * torch.distributions.Gamma(torch.tensor(5.0), torch.tensor(5.0)).sample((B,))
        raw = torch.stack([si, veh, age, lic], 1)
        if fixed:
            x = torch.stack([(torch.log(si) - 9.5) / 1.2, (torch.log(veh) - 10) / 0.6, (age - 48) / 17, (lic - 15) / 12], 1)
        else:
            x = raw
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=gamma_deviance, batches=batches, steps=steps)
