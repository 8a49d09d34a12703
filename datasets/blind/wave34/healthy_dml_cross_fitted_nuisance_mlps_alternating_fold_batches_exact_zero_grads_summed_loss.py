"""Double/debiased machine learning (healthy): the nuisance functions of a partially linear
model, the outcome regression l(X) = E[Y|X] and the propensity m(X) = P(D=1|X), are learned by
neural nets with 2-fold CROSS-FITTING. The model holds one outcome net and one propensity net
per fold; each mini-batch comes from one fold's training split (folds alternate by step) and
only that fold's nets are used, so the other fold's nets get EXACTLY ZERO gradients on every
other step (Adam then still moves them a little with its momentum). The loss is the SUM (not
mean) over the batch of squared outcome errors plus the Bernoulli log-loss of the treatment,
so its value is in the hundreds and jumps between folds (the folds' nets are at different
stages of training).

Why it looks alarming but is healthy: exactly-zero gradient tensors for half the parameters at
every step, large summed loss values and a saw-tooth between consecutive steps are all by
design; both folds' nuisance fits improve steadily, which is what the orthogonal score for the
treatment effect needs.

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Chernozhukov et al. (2018) 'Double/debiased machine learning for treatment and "
          "structural parameters' -- cross-fitting of neural nuisance models; DoubleML "
          "(Bach et al. 2022) neural learners")


def mlp(d_in, width, depth, d_out):
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, d_out))
    return nn.Sequential(*layers)


class CrossFitNuisance(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        self.outcome = nn.ModuleList([mlp(d_in, width, depth, 1) for _ in range(2)])
        self.propensity = nn.ModuleList([mlp(d_in, width, depth, 1) for _ in range(2)])

    def forward(self, x, fold):
        k = int(fold)
        return torch.cat([self.outcome[k](x), self.propensity[k](x)], 1)


def dml_nuisance_loss(out, target):
    y, d = target[:, 0], target[:, 1]
    sq = ((out[:, 0] - y) ** 2).sum()
    ll = nn.functional.binary_cross_entropy_with_logits(out[:, 1], d, reduction="sum")
    return sq + ll


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 48, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [2e-3, 1.5e-3, 1e-3][seed % 3]
    bs = [128, 192, 256][seed % 3]
    steps = 200
    P, theta = 10, 0.5

    model = CrossFitNuisance(P, width, depth)
    a = torch.randn(P, generator=g) * 0.5
    b = torch.randn(P, generator=g) * 0.5

    def sample(n, fold):
        x = torch.randn(n, P, generator=g)
        d = (torch.rand(n, generator=g) < torch.sigmoid(x @ a + 0.5 * torch.sin(x[:, 0]))).float()
        y = theta * d + x @ b + torch.cos(x[:, 1]) + 0.5 * torch.randn(n, generator=g)
        return (x, torch.tensor(fold)), torch.stack([y, d], 1)

    batches = [sample(bs, t % 2) for t in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=dml_nuisance_loss, batches=batches,
                steps=steps)
