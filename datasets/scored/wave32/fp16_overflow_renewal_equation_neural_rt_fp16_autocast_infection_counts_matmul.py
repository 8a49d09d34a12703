"""Renewal-equation epidemic model with a neural reproduction number R_t, trained under fp16 autocast (Adam, MSE on log counts).

Mechanism: for each region an MLP maps daily covariates (mobility, stringency index, temperature,
vaccination coverage) to R_t = softplus(.); infections follow the renewal equation
I_t = R_t * sum_s w_s I_{t-s} with a 10-day generation-interval kernel w, seeded with the
region's observed first week, and the loss is MSE between log1p(predicted) and log1p(observed
daily infections). The author turns on ``torch.autocast(dtype=torch.float16)`` for speed. The
convolution with w is written as a matmul, which autocast runs in fp16, on raw infection
*counts*. At the start R_t ~ softplus(0) ~ 0.7, the modelled epidemics shrink and every value is
small; as the model learns R_t > 1 for the growing regions, their modelled daily infections
pass 65504 somewhere in the 60-day horizon, the fp16 matmul returns inf, and the loss becomes
inf/NaN a number of steps into an otherwise calm run.

ORIGIN: None: the overflow happens in the renewal matmul, a functional op in the top-level
model's own forward, not inside any submodule (rt_net's fp16 outputs are finite and small).

Fix: run the renewal recursion in fp32 (autocast disabled for that op, inputs cast to float),
everything else, including fp16 autocast for the MLP, unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("Renewal-equation R_t models (Cori et al. 2013, EpiNow2, Bhatt et al. 2023 semi-mechanistic "
          "models); PyTorch AMP docs: fp16 max 65504, ops on large-magnitude values should run in fp32")


class RenewalModel(nn.Module):
    def __init__(self, hidden, depth, w, fp32_renewal):
        super().__init__()
        layers, d = [], 4
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.GELU()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.rt_net = nn.Sequential(*layers)
        self.register_buffer("w", w)                      # (K,) generation-interval kernel
        self.fp32_renewal = fp32_renewal

    def renewal(self, rt, seed_inf):
        K = self.w.shape[0]
        hist = seed_inf                                   # (B, K) most recent last
        out = []
        for t in range(rt.shape[1]):
            force = (hist[:, -K:] @ self.w.flip(0).unsqueeze(1)).squeeze(1)   # matmul (fp16 under autocast)
            new = rt[:, t] * force
            out.append(new)
            hist = torch.cat([hist[:, 1:], new.unsqueeze(1).to(hist.dtype)], 1)
        return torch.stack(out, 1)

    def forward(self, cov, seed_inf):
        rt = nn.functional.softplus(self.rt_net(cov)).squeeze(-1)             # (B, T)
        if self.fp32_renewal:
            with torch.autocast("cpu", enabled=False):
                inf = self.renewal(rt.float(), seed_inf.float())
        else:
            inf = self.renewal(rt, seed_inf)
        return torch.log1p(inf.float().clamp_min(0))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 24][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [16, 12, 20][seed % 3]
    steps = 100
    T, K = 60, 10
    N = steps * bs
    s = torch.arange(1, K + 1).float()
    w = s ** 2 * torch.exp(-s / 1.5)
    w = w / w.sum()
    cov = torch.randn(N, T, 4, generator=g) * 0.2 + torch.randn(N, 1, 4, generator=g)
    cov = cov + torch.linspace(-0.5, 0.5, T).view(1, T, 1) * torch.randn(N, 1, 4, generator=g)
    rt_true = torch.exp(0.25 * cov[..., 0] - 0.2 * cov[..., 1] + 0.05 * cov[..., 2] + 0.15)
    seed_inf = 200 + 1800 * torch.rand(N, 1, generator=g) * torch.ones(1, K)
    with torch.no_grad():
        truth = RenewalModel(1, 1, w, True).renewal(rt_true, seed_inf)
        obs = torch.log1p(truth * torch.exp(0.1 * torch.randn(N, T, generator=g)))
    model = RenewalModel(hidden, depth, w, fp32_renewal=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    batches = [((cov[i * bs:(i + 1) * bs], seed_inf[i * bs:(i + 1) * bs]), obs[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
