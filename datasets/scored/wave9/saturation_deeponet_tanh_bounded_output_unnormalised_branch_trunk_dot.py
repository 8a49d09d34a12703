"""DeepONet (Lu et al. 2021) learning the solution operator of a bounded reaction-diffusion problem:
the branch net reads the forcing at 64 sensors, the trunk net reads the query coordinate (x, t), and
the prediction is tanh(sum_k b_k * t_k + b0), the tanh enforcing the known physical range [-1, 1] of
the normalised concentration. With p = 1024 basis terms, a trunk whose last layer is tanh-activated
(as in DeepXDE) and a branch whose outputs are O(1), the raw inner product is a sum of 1024 products
and has a scale of tens: the output tanh is saturated at +-1 for essentially every (function, point)
pair, its derivative 1 - tanh^2 is ~1e-8, and neither branch nor trunk receives a usable gradient.
The MSE stays at its starting level for the whole run and never goes non-finite. The fix normalises
the inner product by 1/p (a mean instead of a sum), which keeps the output pre-activation O(1)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = "Lu et al. 2021 DeepONet; DeepXDE DeepONet with output transform tanh; 'predictions stuck at +-1' reports for bounded-output operator nets"

N_SENS, P, N_PTS, STEPS, BATCH = 64, 1024, 32, 120, 16


class DeepONet(nn.Module):
    def __init__(self, normalise):
        super().__init__()
        self.normalise = normalise
        self.branch = nn.Sequential(nn.Linear(N_SENS, 128), nn.Tanh(), nn.Linear(128, P))
        self.trunk = nn.Sequential(nn.Linear(2, 128), nn.Tanh(), nn.Linear(128, P), nn.Tanh())
        self.b0 = nn.Parameter(torch.zeros(1))
        self.out_act = nn.Tanh()

    def forward(self, u, xt):
        b = self.branch(u)                       # (B, P)
        t = self.trunk(xt)                       # (B, N, P)
        z = torch.einsum("bp,bnp->bn", b, t)
        if self.normalise:
            z = z / P
        return self.out_act(z + self.b0)


def _data(g, n):
    s = torch.linspace(0, 1, N_SENS)
    k = torch.arange(1, 5).float()
    coef = torch.randn(n, 4, generator=g) / k
    u = (coef.unsqueeze(-1) * torch.sin(math.pi * k.view(1, 4, 1) * s)).sum(1)
    xt = torch.rand(n, N_PTS, 2, generator=g)
    x, t = xt[..., 0], xt[..., 1]
    sol = torch.zeros(n, N_PTS)
    for j in range(4):
        sol = sol + coef[:, j:j + 1] * torch.exp(-0.3 * (j + 1) ** 2 * t) * torch.sin(math.pi * (j + 1) * x)
    return u, xt, 0.6 * torch.tanh(sol)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    model = DeepONet(normalise=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    u, xt, y = _data(g, 40 * BATCH)
    batches = []
    for i in range(STEPS):
        j = i % 40
        sl = slice(j * BATCH, (j + 1) * BATCH)
        batches.append(((u[sl], xt[sl]), y[sl]))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
