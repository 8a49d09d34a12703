"""Analysis-optimised observable for a search (neos / INFERNO style): an MLP maps each event's
kinematics (dijet mass, delta-eta_jj, lepton pT, MET, centrality, ...) to a score in (0, 1); a
differentiable histogram layer turns the scores into soft bin memberships built from sigmoid bin
edges, and the loss is the expected variance of the signal strength, 1 / sum_i s_i^2 / (s_i + b_i),
from the weighted signal and background yields per bin.  Adam.

Mechanism: the soft histogram uses membership_i = sigmoid((f - e_i) / tau) - sigmoid((f - e_{i+1})
/ tau) with bandwidth tau = 1e-4, chosen "so the soft histogram matches the hard one used in the
final fit".  With bins 0.1-0.2 wide, (f - e) / tau is ~1e2-1e3 for every event not within ~1e-3 of
an edge, where the sigmoids are saturated at exactly 0 or 1 in float32 and their derivative is 0.
All scores start in the middle bin (the untrained MLP outputs f ~ 0.5 +- 0.05), no event is near an
edge, the gradient of the loss with respect to every score is exactly zero and the observable never
moves: the loss stays at its initial value.  With a bandwidth comparable to the bin width the
memberships are in the sigmoids' working range and the observable learns to separate signal.

ORIGIN: ``hist``, the soft-histogram layer whose sigmoid edges saturate and stop the gradient
to the observable network.

Fix: bandwidth tau = 0.5 x bin width (the neos recommendation of a bandwidth of the order of the
bin width); same model, loss, optimiser, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "hist"
SOURCE = ("neos (Simpson & Heinrich 2021, 'neos: end-to-end-optimised summary statistics', bandwidth "
          "vs bin width) and INFERNO (de Castro & Dorigo 2019) differentiable histograms; "
          "saturated sigmoid edges give zero gradient")

S_TOTAL, B_TOTAL = 60.0, 1500.0


class SoftHistogram(nn.Module):
    def __init__(self, n_bins, bandwidth):
        super().__init__()
        self.register_buffer("edges", torch.linspace(0.0, 1.0, n_bins + 1))
        self.bandwidth = bandwidth

    def forward(self, f):
        cdf = torch.sigmoid((f[:, None] - self.edges[None, :]) / self.bandwidth)
        return cdf[:, :-1] - cdf[:, 1:]                 # (B, n_bins) memberships


class Observable(nn.Module):
    def __init__(self, d_in, width, depth, n_bins, bandwidth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers += [nn.Linear(d, 1), nn.Sigmoid()]
        self.net = nn.Sequential(*layers)
        with torch.no_grad():
            self.net[-2].weight.mul_(0.3)
        self.hist = SoftHistogram(n_bins, bandwidth)

    def forward(self, x):
        return self.hist(self.net(x).squeeze(1))


def _events(g, n, sig_frac=0.5):
    y = (torch.rand(n, generator=g) < sig_frac).float()
    r = lambda: torch.randn(n, generator=g)
    mjj = torch.where(y > 0, 1.4 + 0.35 * r(), 0.7 + 0.45 * r()).abs()          # TeV
    deta = torch.where(y > 0, 4.5 + 1.2 * r(), 2.0 + 1.5 * r()).abs()
    ptl = torch.where(y > 0, 0.12 + 0.05 * r(), 0.08 + 0.06 * r()).abs()         # TeV
    met = torch.where(y > 0, 0.10 + 0.05 * r(), 0.07 + 0.05 * r()).abs()
    cen = torch.where(y > 0, 0.2 + 0.3 * r(), 0.8 + 0.5 * r()).abs()
    noise = torch.randn(n, 3, generator=g)
    x = torch.cat([torch.stack([mjj, deta, ptl * 10, met * 10, cen], 1), noise], 1)
    return (x - x.mean(0)) / x.std(0), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_bins = [5, 7, 9][seed % 3]
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [256, 512, 384][seed % 3]
    steps = 150
    bandwidth = 0.5 / n_bins if fixed else 1e-4

    x, y = _events(g, bs * steps)

    torch.manual_seed(seed)
    model = Observable(x.shape[1], width, depth, n_bins, bandwidth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(memb, label):
        ws = S_TOTAL / label.sum().clamp_min(1.0)
        wb = B_TOTAL / (1 - label).sum().clamp_min(1.0)
        s = (memb * label[:, None]).sum(0) * ws
        b = (memb * (1 - label)[:, None]).sum(0) * wb
        fisher = (s ** 2 / (s + b + 1e-3)).sum()
        return 1.0 / fisher                                 # expected Var(mu_hat)

    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
