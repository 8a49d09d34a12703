"""Card-fraud detector: MLP on standardised transaction features (log-amount, hour, merchant
risk score, velocity counts, ...) trained with the sigmoid focal loss (alpha 0.25, gamma 2)
and SGD with momentum. Standardisation statistics come from a clean reference month.

Mechanism: one nightly export (its step varies with the seed) contains a few transactions
whose amount field holds the acquirer's "amount unknown" sentinel 9.99e9 instead of a value;
the pipeline standardises the raw amount, giving a feature of ~1e6 standard deviations for
those rows. Their logits are ~1e5-1e6, the focal loss on them is of the same size and the
gradient w.r.t. the first layer is that error times the 1e6 feature: one SGD step moves the
first-layer weights by orders of magnitude. Depending on the run, the following (clean)
batches then produce astronomically large logits and the loss overflows to inf/NaN, or the
wrecked first layer leaves the loss stuck well above where it was before the bad batch.

ORIGIN: ``mlp.0``, the first Linear layer: it is the first module the corrupt rows hit and
the one whose weights take the catastrophic update.

Fix: drop rows with sentinel / out-of-range amounts from the batch (the model sees the
same batch minus those rows); model, loss, optimiser and steps unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "mlp.0"
SOURCE = ("Lin et al. 2017 focal loss (torchvision.ops.sigmoid_focal_loss); payment data sentinel values "
          "(9999999999 'amount unknown') leaking into features, Kaggle credit-card fraud and IEEE-CIS "
          "discussions on placeholder values; 'loss suddenly becomes nan after N epochs' reports")


class FraudMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x).squeeze(-1)


def focal_loss(logits, y, alpha=0.25, gamma=2.0):
    ce = F.binary_cross_entropy_with_logits(logits, y, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * y + (1 - p) * (1 - y)
    a_t = alpha * y + (1 - alpha) * (1 - y)
    return (a_t * (1 - p_t) ** gamma * ce).mean()


def transactions(g, n, w):
    amount = torch.exp(3.5 + 1.2 * torch.randn(n, generator=g))           # dollars
    other = torch.randn(n, w.shape[0] - 1, generator=g)
    z = torch.cat([torch.log1p(amount)[:, None], other], 1)
    score = (z - z.mean(0)) @ w - 2.5
    y = (torch.rand(n, generator=g) < torch.sigmoid(score)).float()
    return amount, other, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 2 + seed % 2
    width = [64, 128, 96][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    bad_step = [60, 95, 40][seed % 3]
    d_in, steps = 10, 150

    torch.manual_seed(seed)
    model = FraudMLP(d_in, width, depth)

    w = torch.randn(d_in, generator=g)
    ref_amount, _, _ = transactions(g, 20000, w)
    a_mu, a_sd = ref_amount.mean(), ref_amount.std()
    batches = []
    for step in range(steps):
        amount, other, y = transactions(g, batch, w)
        if step == bad_step:
            amount[:4] = 9.99e9                                             # "amount unknown" sentinel
            y[:4] = torch.tensor([1.0, 0.0, 1.0, 0.0])                      # disputed and settled ones
        x = torch.cat([((amount - a_mu) / a_sd)[:, None], torch.log1p(amount)[:, None], other[:, 1:]], 1)
        if fixed:
            keep = amount < 1e7
            x, y = x[keep], y[keep]
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": focal_loss, "batches": batches, "steps": steps}
