"""Vaccine-effect estimator: TARNet (shared representation + treated/untreated outcome heads) on a test-negative cohort (SGD+momentum, BCE-with-logits).

Mechanism: each row is a symptomatic person tested for influenza: covariates (age, sex,
comorbidity score, calendar week, prior infection, healthcare-seeking index, 10 more
standardised features), vaccination status (treatment) and test result (outcome). TARNet learns
a shared ELU representation and two logistic heads; the factual head's logit is trained with
BCEWithLogitsLoss, and VE is 1 - odds ratio of the two heads. The author sets SGD lr = 2-3 with momentum 0.9, carried over from a
plain logistic-regression fit of the same cohort (where a convex loss on standardised covariates
tolerates it). For the 2-3 layer representation the effective step (lr / (1 - momentum) ~ 25)
multiplies through the layers: after a few calm steps the updates overshoot, the weights of the
representation and heads grow by orders of magnitude within a dozen steps, the logits reach
+-1e30 and beyond, and the loss becomes inf/NaN.

ORIGIN: None: an lr problem is global, not started by one module.

Fix: lr = 0.05 (same model, optimiser, momentum, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Shalit et al. 2017 TARNet/CFR; test-negative design VE estimation (Jackson & Nelson 2013); "
          "effective SGD step lr/(1-momentum) far above the stable range for a deep net (Goodfellow et al. 2016, sec. 8.3)")


class TARNet(nn.Module):
    def __init__(self, d_in, rep, head, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, rep), nn.ELU()]
            d = rep
        self.phi = nn.Sequential(*layers)
        self.h0 = nn.Sequential(nn.Linear(rep, head), nn.ELU(), nn.Linear(head, 1))
        self.h1 = nn.Sequential(nn.Linear(rep, head), nn.ELU(), nn.Linear(head, 1))

    def forward(self, x, treat):
        r = self.phi(x)
        y0, y1 = self.h0(r).squeeze(-1), self.h1(r).squeeze(-1)
        return torch.where(treat > 0.5, y1, y0)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    rep = [64, 96, 128][seed % 3]
    head = [32, 48, 32][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr = 0.05 if fixed else [2.5, 2.0, 3.0][seed % 3]
    steps = 150
    N = steps * bs
    X = torch.randn(N, 16, generator=g)
    propensity = torch.sigmoid(0.8 * X[:, 0] + 0.5 * X[:, 5] - 0.3 * X[:, 2])
    treat = (torch.rand(N, generator=g) < propensity).float()
    logit = 3.0 * (-0.3 + 0.6 * X[:, 0] - 0.4 * X[:, 3] + 0.5 * X[:, 4] * X[:, 1] - 0.9 * treat * (1 + 0.3 * X[:, 0]))
    Y = (torch.rand(N, generator=g) < torch.sigmoid(logit)).float()

    model = TARNet(16, rep, head, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    batches = [((X[i * bs:(i + 1) * bs], treat[i * bs:(i + 1) * bs]), Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
