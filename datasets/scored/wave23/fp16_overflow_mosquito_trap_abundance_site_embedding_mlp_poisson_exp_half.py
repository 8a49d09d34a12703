"""Mosquito trap-count model under fp16 autocast: the Poisson rate exp(log_rate) overflows in half.

Mechanism: a surveillance model predicts weekly CO2/light-trap mosquito counts from lagged
weather (rainfall, temperature, humidity, flooding index) plus a learned per-trap site
embedding (random-effect-like), using a hand-written Poisson NLL
``rate = exp(log_rate); nll = rate - y*log_rate + lgamma(y+1)``. Training runs under
``torch.autocast(dtype=float16)`` to speed it up (copied from the image models of the same
lab); no GradScaler is set up and the loss is computed inside the autocast region from the
fp16 model output. On CPU autocast, exp of an fp16 tensor stays fp16. Counts at flooded
sites reach 1e5 per week, so as the model learns, the predicted log-rate of those traps
climbs past ln(65504) ~ 11.09 within the first 10-25 steps, exp() returns inf in half
precision and the loss is inf (before that the loss was large, noisy and finite).

ORIGIN = "head": the fp16 value that overflows is the exponentiated output of the final Linear
(the head's log-rate); the exp is applied to it in the loss, so the head is the last module
before the overflowing op.

Fix: autocast to bfloat16 instead of float16 (same exponent range as float32, so exp of a
log-rate of 12 is ~1.6e5, not inf); same model, loss, data, optimiser and steps. (Casting the
output to float32 before exp alone is not enough here: the fp16 backward of the head then
overflows on the largest traps.)
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "head"
SOURCE = ("PyTorch AMP docs (ops that can overflow in float16, e.g. exp, should run in float32); "
          "forum reports 'Poisson loss inf with autocast/half'; mosquito abundance models from trap "
          "surveillance (e.g. weather-driven Culex count models)")


class TrapNet(nn.Module):
    def __init__(self, d_in, n_sites, width, emb):
        super().__init__()
        self.site = nn.Embedding(n_sites, emb)
        self.body = nn.Sequential(nn.Linear(d_in + emb, width), nn.SiLU(),
                                  nn.Linear(width, width), nn.SiLU())
        self.head = nn.Linear(width, 1)

    def forward(self, x, site):
        h = torch.cat([x, self.site(site)], -1)
        return self.head(self.body(h)).squeeze(-1)          # log-rate


def poisson_nll(log_rate, y):
    rate = torch.exp(log_rate)
    return (rate - y * log_rate + torch.lgamma(y + 1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(12000 + seed)
    width = [64, 96, 128][seed % 3]
    emb = [8, 12, 16][seed % 3]
    lr = [5e-3, 3e-3, 8e-3][seed % 3]
    bs = [64, 96, 48][seed % 3]
    n_sites = 40
    d_in = 10
    steps = 200
    torch.manual_seed(seed)
    model = TrapNet(d_in, n_sites, width, emb)
    n = bs * steps
    x = torch.randn(n, d_in, generator=g)
    site = torch.randint(0, n_sites, (n,), generator=g)
    site_eff = 1.5 * torch.randn(n_sites, generator=g)
    flood = torch.relu(x[:, 0] + 0.5 * x[:, 1])                     # flooding after heavy rain
    log_mu = 5.0 + site_eff[site] + 1.2 * flood + 0.6 * x[:, 2] - 0.3 * x[:, 3] ** 2
    log_mu = log_mu.clamp(max=12.0)
    y = torch.poisson(torch.exp(log_mu), generator=g)
    batches = [((x[i * bs:(i + 1) * bs], site[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=poisson_nll, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
