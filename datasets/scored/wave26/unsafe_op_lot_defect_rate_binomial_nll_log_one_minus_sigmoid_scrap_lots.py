"""Lot-level defect-rate model (MLP, hand-written binomial NLL) meets fully-scrapped lots.

Mechanism: for each production lot an AQL sample of n units is inspected and k are
found defective; an MLP on the standardised process settings of the lot (furnace
profile, line speed, humidity, resin batch, ...) predicts the defect probability
p = sigmoid(z), trained with the binomial NLL written out by hand:
    -(k * log(p) + (n - k) * log(1 - p)) / n.
Lots run during a furnace excursion (its temperature-deviation tag sits 20-30 sigma
off) are scrapped entirely (k = n). For them the
likelihood keeps rising as z -> +inf, and Adam, which normalises the shrinking
gradient, keeps pushing their logits up at a roughly constant rate. Once z passes
~16.6, float32 sigmoid(z) rounds to exactly 1.0, log(1 - p) = log(0) = -inf and
(n - k) * log(1 - p) = 0 * -inf = NaN: after a calm phase in which the loss has
already fallen, it turns NaN (the backward of log at 0 would be inf * 0 = NaN too).

ORIGIN: ``head`` - the output layer whose logit feeds the unsafe log(1 - sigmoid(z));
the log itself is a functional call in the loss, not a module.

Fix: the numerically stable forms log p = logsigmoid(z) and log(1 - p) =
logsigmoid(-z) (equivalently BCE-with-logits with k/n targets weighted by n); same
model, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = ("Binomial / fraction-defective regression for lot acceptance sampling (Montgomery, "
          "'Introduction to Statistical Quality Control', Ch. on p-charts & AQL); PyTorch docs: "
          "BCEWithLogitsLoss 'more numerically stable than a plain Sigmoid followed by a BCELoss'; "
          "forum reports of NaN from torch.log(1 - torch.sigmoid(x)).")


class LotDefectNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


def _lots(g, bs, w, n_insp, scrap_rate):
    x = torch.randn(bs, 9, generator=g)
    excursion = (torch.rand(bs, generator=g) < scrap_rate)
    x[:, 8] = torch.randn(bs, generator=g)  # furnace temperature deviation (z-scored on normal runs)
    x[excursion, 8] += 20.0 + 10.0 * torch.rand(int(excursion.sum()), generator=g)  # excursion: 20-30 sigma
    p = torch.sigmoid(x[:, :8] @ w - 2.5)
    k = torch.binomial(torch.full((bs,), float(n_insp)), p, generator=g)
    k = torch.where(excursion, torch.full_like(k, float(n_insp)), k)
    return x, torch.stack([k, torch.full_like(k, float(n_insp))], 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(125 + seed)
    width = [64, 48, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    bs = [128, 96, 64][seed % 3]
    n_insp = [32, 50, 20][seed % 3]
    scrap_rate = [0.05, 0.1, 0.04][seed % 3]
    steps = 300
    w = 0.5 * torch.randn(8, generator=g)

    def binomial_nll(z, kn):
        k, n = kn[:, 0], kn[:, 1]
        if fixed:
            log_p, log_q = F.logsigmoid(z), F.logsigmoid(-z)
        else:
            p = torch.sigmoid(z)
            log_p, log_q = torch.log(p), torch.log(1 - p)
        return (-(k * log_p + (n - k) * log_q) / n).mean()

    model = LotDefectNet(9, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_lots(g, bs, w, n_insp, scrap_rate) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=binomial_nll, batches=batches, steps=steps)
