"""PCBA first-pass-yield model: DeepSets over the placed components, sum pooling into a tanh head.

Mechanism: a printed-circuit-board assembly is the set of its placed parts (package
family, pitch, pin count, moisture sensitivity level, reflow margin, feeder history,
...; 12 standardised features per part). Log first-pass yield is additive over
parts, so the engineer chose sum pooling: phi (Linear + ReLU) embeds each part, the
embeddings are summed over the 100-300 parts of a board and rho (Linear + tanh,
Linear + tanh, Linear) maps the pooled vector to the standardised log-yield. The
ReLU embeddings are non-negative, so the pooled vector grows with the part count
(~ 30-100 per dimension) and the first tanh of rho receives pre-activations of
several tens: every unit is pinned at exactly +-1 in float32 for every board,
tanh' = 0, nothing below it receives a gradient, and rho's later layers see a
constant sign pattern. Only the last bias learns; the loss stays at the target
variance (a stall with finite values).

ORIGIN: ``rho.1`` - the first tanh of rho, where the saturation happens (its input
is the oversized sum).

Fix: scale the pooled sum by a constant 1/sqrt(typical part count) (keeps the
additive structure, brings the pre-activations to O(1)); same model otherwise,
data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "rho.1"
SOURCE = ("Zaheer et al. 2017 Deep Sets (sum pooling); yield modelling of SMT assemblies from "
          "component attributes (e.g. DPMO-based first-pass-yield models, IPC-7912); tanh "
          "saturation with unnormalised sum aggregation (Xu et al. 2019 GIN discussion, "
          "Wagstaff et al. 2019 'On the limitations of representing functions on sets').")

D_PART = 12


class YieldDeepSets(nn.Module):
    def __init__(self, dim, width, pool_scale):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(D_PART, dim), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(dim, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))
        self.pool_scale = pool_scale

    def forward(self, parts, mask):
        e = self.phi(parts) * mask[..., None]
        pooled = e.sum(1) * self.pool_scale
        return self.rho(pooled).squeeze(-1)


def _boards(g, n, n_max, lo, w_def):
    counts = torch.randint(lo, n_max + 1, (n,), generator=g)
    parts = torch.randn(n, n_max, D_PART, generator=g)
    mask = (torch.arange(n_max)[None, :] < counts[:, None]).float()
    # per-part defect propensity (fine pitch, high pin count, MSL, small reflow margin ...)
    logit = parts @ w_def - 3.5 + 0.8 * torch.relu(parts[..., 0] + parts[..., 1])
    p_def = torch.sigmoid(logit) * mask
    log_fpy = torch.log1p(-p_def).sum(1)
    return (parts, mask), log_fpy


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(731 + seed)
    dim = [32, 48, 64][seed % 3]
    width = [64, 96, 64][seed % 3]
    n_max, lo = [(200, 100), (300, 150), (250, 120)][seed % 3]
    lr = [1e-3, 3e-3, 2e-3][seed % 3]
    bs = [64, 48, 64][seed % 3]
    steps = 150
    w_def = 0.6 * torch.randn(D_PART, generator=g)
    _, y_ref = _boards(torch.Generator().manual_seed(3), 512, n_max, lo, w_def)
    mu, sd = y_ref.mean(), y_ref.std()
    scale = 1.0 / ((n_max + lo) / 2) ** 0.5 if fixed else 1.0
    model = YieldDeepSets(dim, width, scale)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        x, y = _boards(g, bs, n_max, lo, w_def)
        batches.append((x, (y - mu) / sd))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
