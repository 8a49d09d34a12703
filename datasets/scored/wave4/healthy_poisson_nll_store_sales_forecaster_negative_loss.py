"""Store-level daily sales-count forecaster (MLP over lagged log1p counts + day-of-week one-hot,
predicting the log-rate of a Poisson) trained with nn.PoissonNLLLoss(log_input=True, full=False).
Without the Stirling term the loss is exp(r) - y*r, which for count levels in the tens is strongly
negative: the loss is about -20 at the first step and keeps falling to about -70. A negative, ever-decreasing loss looks like a bug but is exactly what this NLL
(up to the dropped log(y!) constant) should do. Nothing is wrong."""
import torch, torch.nn as nn, math
CAUSE = "healthy"
ORIGIN = None
SOURCE = "torch.nn.PoissonNLLLoss docs (full=False omits log(y!)); 'negative Poisson NLL loss is it a bug' forum threads"

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    lags = [14, 7, 28][seed % 3]; h = [32, 48, 24][seed % 3]
    steps = [150, 120, 200][seed % 3]; bs = [64, 32, 48][seed % 3]
    model = nn.Sequential(nn.Linear(lags + 7, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
    dow_eff = torch.tensor([0.0, -0.1, -0.1, 0.0, 0.2, 0.5, 0.3])
    def make():
        base = torch.exp(math.log(15) + 1.0 * torch.rand(bs, 1, generator=g))
        day0 = torch.randint(0, 7, (bs, 1), generator=g)
        days = (day0 + torch.arange(lags + 1)) % 7
        rate = base * torch.exp(dow_eff[days])
        counts = torch.poisson(rate, generator=g)
        dow = torch.nn.functional.one_hot(days[:, -1], 7).float()
        x = torch.cat([torch.log1p(counts[:, :-1]), dow], 1)
        return x, counts[:, -1]
    batches = [make() for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    crit = nn.PoissonNLLLoss(log_input=True, full=False)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: crit(out.squeeze(1), y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
