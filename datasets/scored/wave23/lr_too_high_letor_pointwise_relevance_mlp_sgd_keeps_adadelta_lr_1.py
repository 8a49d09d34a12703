"""Query-document ranking, pointwise: an MLP scores LETOR-style
query-document feature vectors (BM25/TF-IDF/LM-Dirichlet on several fields,
PageRank, URL length, ...; standardised per query) and regresses the graded
relevance label 0-4 with MSE.  The optimiser was switched from Adadelta to
SGD+momentum but the lr = 1.0 of the Adadelta script was kept.

Mechanism: the training script started from the PyTorch MNIST example, whose
``optim.Adadelta(model.parameters(), lr=1.0)`` is Adadelta's natural unit
step size.  Replacing it with ``optim.SGD(..., lr=args.lr, momentum=0.9)``
and keeping the Adadelta-scale ``--lr`` (1.0, or 2.0 in a sweep) makes every
update as large as the weights themselves (update/weight ratios far above
~1e-3).  On an MSE regression the error grows geometrically from step to
step: the predictions overshoot, the gradients grow with them, and within a
few to a few tens of steps the loss overflows to inf/NaN.  (In some seeds the
overshoot first kills most ReLUs and the loss freezes at the label variance
before any overflow - the same cause, seen as a stall.)

ORIGIN: None - an optimiser setting; no single module starts it.

Fix: an lr suited to SGD+momentum on this problem (lr = 0.01); same model,
data and steps.
"""
import random

import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("pytorch/examples mnist/main.py (optim.Adadelta, --lr default 1.0) reused with optim.SGD; "
          "pointwise learning-to-rank on LETOR/MSLR-WEB-style features (Liu 2009; Qin et al. 2010); "
          "SGD divergence on MSE regression when lr exceeds 2/lambda_max")

N_FEAT = 46


def _queries(g, n_q, n_docs, w1, w2):
    x = torch.randn(n_q, n_docs, N_FEAT, generator=g)
    # per-query standardisation, as in the LETOR "QueryLevelNorm" files
    x = (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-6)
    rel = torch.tanh(x @ w1) @ w2 + 0.3 * torch.randn(n_q, n_docs, generator=g)
    # graded labels 0-4 from quantiles of the latent relevance
    q = torch.quantile(rel.flatten(), torch.tensor([0.5, 0.75, 0.9, 0.97]))
    y = torch.bucketize(rel, q).float()
    return x.reshape(-1, N_FEAT), y.reshape(-1)


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    width = r.choice([64, 128, 256])
    depth = r.choice([2, 3])
    lr = r.choice([1.0, 2.0])
    n_q = r.choice([8, 16])
    n_docs = r.choice([20, 40])
    steps = r.choice([80, 100, 120])

    g = torch.Generator().manual_seed(10000 + seed)
    w1 = torch.randn(N_FEAT, 16, generator=g) / N_FEAT ** 0.5 * 2
    w2 = torch.randn(16, generator=g)
    batches = [_queries(g, n_q, n_docs, w1, w2) for _ in range(steps)]

    torch.manual_seed(seed)
    layers, d = [], N_FEAT
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = _Scorer(nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else lr, momentum=0.9)
    mse = nn.MSELoss()
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: mse(out.squeeze(1), y),
                batches=batches, steps=steps)


class _Scorer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)
