"""Regional influenza-like-illness GRU forecaster with Poisson NLL and a too-large SGD rate.

Mechanism: a GRU reads 12 weeks of log(1+ILI visits) and a mobility index for a region and
outputs the log-rate of next week's visit count (head bias started at log of the mean count);
the loss is ``PoissonNLLLoss(log_input=True, full=True)`` on the raw counts (tens to about a
thousand per week). The gradient of the Poisson NLL w.r.t. the log-rate is exp(log_rate) - y,
i.e. it scales with the counts. The author used SGD+momentum with
lr = 5e-3..2e-2, the rate of the tutorial this was adapted from (which forecast z-scored incidence
with MSE). The head weights jump by far more than their size on the first step, the predicted
log-rate overshoots, the next gradient (exp(log_rate) - y) is larger still, and within a few
steps exp() of the log-rate overflows float32 and the loss is inf. Nothing is wrong with the
data, init or model: the update size is.

ORIGIN = None: an over-large learning rate makes every parameter's update too big at once; no
single module starts it (the head is merely where the overflow shows).

Fix: lr = 3e-4 (the same SGD+momentum); same model, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("CDC FluSight-style weekly ILI forecasting with RNNs and count likelihoods; PyTorch forum "
          "'PoissonNLLLoss gives inf/nan' threads where the rate was tuned for normalised targets; "
          "Goodfellow et al. 2016 ch. 8 on step size vs. gradient scale")


class FluGRU(nn.Module):
    def __init__(self, hid, layers):
        super().__init__()
        self.gru = nn.GRU(2, hid, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hid, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(-1)


def _seasons(g, n):
    # SIR-like seasonal curves per region with different peak weeks, sizes and reporting
    t = torch.arange(60).float()
    peak = 20 + 20 * torch.rand(n, 1, generator=g)
    width = 4 + 4 * torch.rand(n, 1, generator=g)
    size = torch.exp(4 + 3 * torch.rand(n, 1, generator=g))        # ~55 .. 1100 at the peak
    base = 5 + 10 * torch.rand(n, 1, generator=g)
    lam = base + size * torch.exp(-0.5 * ((t - peak) / width) ** 2)
    counts = torch.poisson(lam, generator=g)
    mob = torch.tanh((t - peak) / 10) + 0.2 * torch.randn(n, 60, generator=g)
    s = torch.randint(0, 47, (n,), generator=g)
    idx = s[:, None] + torch.arange(13)
    c = counts.gather(1, idx)
    m = mob.gather(1, idx[:, :12])
    x = torch.stack([torch.log1p(c[:, :12]), m], -1)
    return x, c[:, 12]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    hid = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = 3e-4 if fixed else [1e-2, 5e-3, 2e-2][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = FluGRU(hid, layers)
    x, y = _seasons(g, bs * steps)
    with torch.no_grad():                     # start at the mean weekly count (log link)
        model.head.bias.fill_(float(torch.log(y.mean())))
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.PoissonNLLLoss(log_input=True, full=True),
                batches=batches, steps=steps)
