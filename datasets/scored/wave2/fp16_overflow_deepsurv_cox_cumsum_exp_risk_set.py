"""DeepSurv-style Cox proportional-hazards MLP trained under float16 autocast without a GradScaler
or fp32 loss. The negative partial log-likelihood is written the usual vectorised way: sort the
batch by descending time, then log(cumsum(exp(risk))) gives the log of each patient's risk-set sum.
Under CPU float16 autocast the risk head (nn.Linear) returns float16, so exp() and cumsum() also
run in float16. As the network learns, risk scores spread up to ~10 (exp < 65504 on its own) and
the risk-set sums over a few hundred patients pass 65504: the cumsum overflows to inf, log(inf)=inf and the loss is
inf/NaN. The fixed run only changes the autocast precision to bfloat16 (same exponent range as
fp32), everything else identical."""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "risk_head"
SOURCE = "DeepSurv / pycox CoxPH loss (log-cumsum-exp of risk) under AMP; pycox and lifelines-torch issues about Cox loss turning inf/NaN in half precision"


class DeepSurv(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers = []
        d = d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SELU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.risk_head = nn.Linear(d, 1)

    def forward(self, x):
        return self.risk_head(self.body(x)).squeeze(-1)


def cox_loss(risk, target):
    time, event = target[:, 0], target[:, 1]
    order = torch.argsort(time, descending=True)
    r = risk[order]
    e = event[order]
    log_risk_set = torch.log(torch.cumsum(torch.exp(r), dim=0))
    return -((r - log_risk_set) * e).sum() / e.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = [12, 16, 10][seed % 3]
    width = [32, 48, 40][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [768, 384, 640][seed % 3]
    steps = [80, 100, 70][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    n = bs * 8
    x = torch.randn(n, d_in, generator=g)
    beta = torch.randn(d_in, generator=g) * 1.5
    true_risk = x @ beta + 0.8 * torch.tanh(x[:, 0] * x[:, 1])
    t = -torch.log(torch.rand(n, generator=g)) / torch.exp(true_risk)
    c = -torch.log(torch.rand(n, generator=g)) / 0.3  # censoring times
    time = torch.minimum(t, c)
    event = (t <= c).float()
    y = torch.stack([time, event], 1)
    batches = [(x[(s % 8) * bs:(s % 8 + 1) * bs], y[(s % 8) * bs:(s % 8 + 1) * bs]) for s in range(steps)]
    model = DeepSurv(d_in, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=cox_loss, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
