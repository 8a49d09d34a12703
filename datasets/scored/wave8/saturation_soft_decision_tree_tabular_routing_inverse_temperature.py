"""Soft (differentiable) decision tree for tabular binary classification (Frosst & Hinton 2017,
Irsoy et al. 2012): each inner node routes a row right with probability
sigmoid(beta * (w_n . x + b_n)), a leaf holds a learnable logit, and the prediction is the
path-probability-weighted mixture of leaf logits, trained with cross-entropy.  To "behave like a
real tree" the routing inverse temperature was hard-coded to beta = 1000.  With standardised
features the node pre-activations w.x+b are O(0.5), so beta times them is O(500): every routing
sigmoid (but for a sliver of rows within ~0.005 of a split) is pinned at 0 or 1, its derivative
is ~0, the split hyperplanes practically never move, and the
leaves can only average the labels of the random fixed cells they received at init.  The target
is an interaction (sign of x0*x1) that random cells cannot capture, so the loss stays at ~log 2
for the whole run, finite throughout.  The fix uses beta = 1 (smaller routing pre-activations)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "inner"
SOURCE = ("Frosst & Hinton 'Distilling a Neural Network Into a Soft Decision Tree' (2017); "
          "Irsoy, Yildiz, Alpaydin 'Soft decision trees' (ICPR 2012); routing temperature too sharp")

N_FEAT, DEPTH = 10, 3


class SoftTree(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta
        self.n_inner = 2 ** DEPTH - 1
        self.inner = nn.Linear(N_FEAT, self.n_inner)
        self.leaf_logit = nn.Parameter(torch.zeros(2 ** DEPTH))

    def forward(self, x):
        p_right = torch.sigmoid(self.beta * self.inner(x))            # B, n_inner
        mu = torch.ones(x.shape[0], 1)
        node = 0
        for d in range(DEPTH):
            width = 2 ** d
            p = p_right[:, node:node + width]
            mu = torch.stack([mu * (1 - p), mu * p], dim=2).flatten(1)
            node += width
        return (mu * self.leaf_logit).sum(1), mu


def tree_loss(out, y):
    logit, _ = out
    return F.binary_cross_entropy_with_logits(logit, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)

    def sample(n):
        x = torch.randn(n, N_FEAT, generator=g)
        y = ((x[:, 0] * x[:, 1]) > 0).float()
        flip = torch.rand(n, generator=g) < 0.05
        return x, torch.where(flip, 1 - y, y)

    steps = 250
    batches = [sample(256) for _ in range(steps)]
    model = SoftTree(beta=1.0 if fixed else 1000.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=tree_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
