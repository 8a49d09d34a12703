"""Intermittent spare-parts demand forecaster: a GRU over each part's weekly demand history (mostly
zeros) plus part covariates, a ReLU-clipped rate head, and a hand-written Poisson negative
log-likelihood  rate - y * log(rate).

Mechanism: the rate head uses ReLU "to keep the Poisson rate non-negative" and its bias starts at
the mean weekly rate, so the early steps are calm. As the model learns that slow movers (long runs of
zero weeks, obsolete fleet) have a near-zero rate, their pre-activation crosses zero and the ReLU
returns exactly 0.0. For such a part-week with y = 0 the loss term is 0 - 0 * log(0) = 0 * (-inf) =
NaN (and +inf where y > 0): one exact zero in the batch makes the mean loss non-finite, at a step
that depends on the seed.

ORIGIN: ``rate_head.1`` -- the ReLU that emits the exact zero which log() then receives; the GRU and
linear layers before it are healthy.

Fix: the usual epsilon in the log, rate - y * log(rate + 1e-8) (as torch's poisson_nll_loss does with
log_input=False); model, data, optimiser, lr and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "rate_head.1"
SOURCE = ("Croston-type intermittent demand (spare parts) modelled with a Poisson likelihood; PyTorch "
          "poisson_nll_loss(log_input=False) adds eps=1e-8 precisely because log(0) at a zero rate "
          "gives -inf and 0 * -inf = NaN; forum reports of NaN from hand-written Poisson losses with "
          "ReLU rates")


class SparePartsGRU(nn.Module):
    def __init__(self, n_cov, hidden, layers, mean_rate):
        super().__init__()
        self.gru = nn.GRU(1 + n_cov, hidden, num_layers=layers, batch_first=True)
        self.rate_head = nn.Sequential(nn.Linear(hidden, 1), nn.ReLU())
        with torch.no_grad():
            self.rate_head[0].weight.mul_(0.1)
            self.rate_head[0].bias.fill_(mean_rate)

    def forward(self, hist, cov):
        h, _ = self.gru(torch.cat([hist.unsqueeze(-1), cov], -1))
        return self.rate_head(h).squeeze(-1)                 # (B, T) weekly rates


class PoissonNLL:
    def __init__(self, eps):
        self.eps = eps

    def __call__(self, rate, y):
        return (rate - y * torch.log(rate + self.eps)).mean()


def _parts(g, bs, T):
    fleet = torch.rand(bs, generator=g)                        # installed base still in service
    criticality = torch.rand(bs, generator=g)
    obsolete = (torch.rand(bs, generator=g) < 0.3).float()
    lam = 2.5 * fleet * (1 + criticality) * (1 - 0.97 * obsolete)
    t = torch.arange(T + 1).float()
    season = 1 + 0.3 * torch.sin(2 * torch.pi * t / 52).unsqueeze(0)
    y = torch.poisson(lam.unsqueeze(1) * season, generator=g)
    cov = torch.stack([fleet.unsqueeze(1).expand(bs, T + 1), criticality.unsqueeze(1).expand(bs, T + 1),
                       obsolete.unsqueeze(1).expand(bs, T + 1), season.expand(bs, T + 1) - 1], -1)
    return (y[:, :-1], cov[:, 1:]), y[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 24, 48][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [3e-3, 4e-3, 2e-3][seed % 3]
    T = 26
    steps = 200
    torch.manual_seed(seed)
    model = SparePartsGRU(4, hidden, layers, mean_rate=1.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_parts(g, bs, T) for _ in range(steps)]
    loss_fn = PoissonNLL(1e-8 if fixed else 0.0)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
