"""Surrogate model for a shell-and-tube heat exchanger, trained on simulator output: inputs are the
raw operating point in SI units (hot/cold mass flows in kg/s, inlet temperatures in K, inlet
pressure in Pa ~ 1e5-6e5, fouling factor in m^2K/W ~ 1e-4, tube length in m), and a GELU MLP trunk
feeds two heads returned as a dict: pressure drop (Pa, thousands to tens of thousands) and hot-side
outlet temperature (K, ~300-400). Nothing is standardised. The first layer therefore sees inputs
spanning ten orders of magnitude -- the pressure column alone puts its pre-activations in the
tens of thousands while the fouling factor is invisible -- and the summed MSE on targets in
pascals and kelvin starts around 1e8. With SGD + momentum at an ordinary lr=0.01 the gradient
w.r.t. the first layer is (error ~1e4) x (input ~1e5), so the very first update throws the
first-layer weights orders of magnitude out; the next loss overflows to inf and then NaN. Fix: z-score the
inputs and both targets with training-set statistics (the loss is then computed on standardised
targets)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "trunk.0"
SOURCE = ("Neural surrogates of process-engineering simulators fed raw SI-unit operating points "
          "(known pattern: missing StandardScaler on inputs and targets; loss ~1e8 from step 0)")


class HXSurrogate(nn.Module):
    def __init__(self, d_in=7, hidden=64):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.dp_head = nn.Linear(hidden, 1)
        self.tout_head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"dp": self.dp_head(h).squeeze(-1), "t_out": self.tout_head(h).squeeze(-1)}


def hx_loss(out, y):
    return F.mse_loss(out["dp"], y["dp"]) + F.mse_loss(out["t_out"], y["t_out"])


def simulate(n, g):
    m_hot = 0.2 + 1.8 * torch.rand(n, generator=g)            # kg/s
    m_cold = 0.2 + 1.8 * torch.rand(n, generator=g)           # kg/s
    t_hot = 340.0 + 60.0 * torch.rand(n, generator=g)         # K
    t_cold = 285.0 + 20.0 * torch.rand(n, generator=g)        # K
    p_in = 1e5 + 5e5 * torch.rand(n, generator=g)             # Pa
    fouling = 1e-4 + 4e-4 * torch.rand(n, generator=g)        # m^2 K / W
    length = 1.0 + 4.0 * torch.rand(n, generator=g)           # m
    ua = 4000.0 * length / (1.0 + 2000.0 * fouling)           # W/K
    c_hot, c_cold = 4180.0 * m_hot, 4180.0 * m_cold
    c_min = torch.minimum(c_hot, c_cold)
    ntu = ua / c_min
    eff = 1 - torch.exp(-ntu * (1 - 0.3 * c_min / torch.maximum(c_hot, c_cold)))
    q = eff * c_min * (t_hot - t_cold)
    t_out = t_hot - q / c_hot
    dp = 3000.0 * length * m_hot ** 1.8 * (1 + 1e-6 * (p_in - 1e5)) + 50.0 * torch.randn(n, generator=g)
    x = torch.stack([m_hot, m_cold, t_hot, t_cold, p_in, fouling, length], dim=1)
    return x, dp, t_out + 0.2 * torch.randn(n, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, bs, steps = 8192, 128, 200
    X, dp, t_out = simulate(n, g)
    if fixed:
        X = (X - X.mean(0)) / X.std(0)
        dp = (dp - dp.mean()) / dp.std()
        t_out = (t_out - t_out.mean()) / t_out.std()
    model = HXSurrogate()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((X[idx], {"dp": dp[idx], "t_out": t_out[idx]}))
    return dict(model=model, optimizer=opt, loss_fn=hx_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
