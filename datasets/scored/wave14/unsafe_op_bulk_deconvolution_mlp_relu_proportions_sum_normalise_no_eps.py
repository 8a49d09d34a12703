"""Scaden-style cell-type deconvolution of bulk RNA-seq: an MLP trained on pseudo-bulk
mixtures simulated from single-cell reference profiles predicts the cell-type proportions
of each sample.  Instead of a softmax, the user's proportion head is "non-negative then
renormalise": ``p = relu(z); p = p / p.sum(1, keepdim=True)`` (so that absent cell types can
be exactly 0), with no epsilon.

Mechanism
---------
The head is fine as long as at least one of the K ReLU outputs is positive for every
sample.  Training pushes the outputs of absent cell types below zero (the simulated
mixtures are sparse: each sample contains only 1-2 of the 6-8 types), and after 15-20 calm
steps some sample has *all* K pre-activations <= 0: the row sum is exactly 0, the
normalisation computes 0/0 = NaN, the MSE is NaN and the backward pass writes NaN into
every weight.  Nothing is wrong before that moment: a calm, decreasing loss, then NaN.

ORIGIN
------
``proportions``: the normalisation module that performs the 0/0 division.

Fix
---
Add an epsilon to the denominator (``p / (p.sum(1, keepdim=True) + 1e-8)``); a sample with
no active output then predicts all-zero proportions (finite loss, zero gradient through the
ReLUs for that row) instead of NaN.  Everything else is identical.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "proportions"
SOURCE = ("Scaden (Menden et al., Sci. Adv. 2020) style pseudo-bulk deconvolution MLP; "
          "ReLU + sum-normalised proportion head (NNLS-like) without epsilon -> 0/0 NaN")


class SumNormalise(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, z):
        p = torch.relu(z)
        return p / (p.sum(1, keepdim=True) + self.eps)


class DeconvMLP(nn.Module):
    def __init__(self, n_genes, hidden, n_types, eps):
        super().__init__()
        layers, d = [], n_genes
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, n_types))
        self.net = nn.Sequential(*layers)
        self.proportions = SumNormalise(eps)

    def forward(self, x):
        return self.proportions(self.net(x))


def _pseudobulk(g, B, ref, n_present_max):
    K, G = ref.shape
    alpha = torch.ones(B, K)
    frac = torch._standard_gamma(alpha, generator=g)
    n_present = torch.randint(1, n_present_max + 1, (B,), generator=g)
    order = torch.rand(B, K, generator=g).argsort(1)
    present = order < n_present[:, None]                     # random subset of cell types
    frac = frac * present
    frac = frac / frac.sum(1, keepdim=True)
    lib = 5e5 * (0.5 + torch.rand(B, 1, generator=g))
    mu = (frac @ ref) * lib
    counts = torch.poisson(mu, generator=g)
    x = torch.log2(counts + 1.0)
    x = (x - x.amin(1, keepdim=True)) / (x.amax(1, keepdim=True) - x.amin(1, keepdim=True))
    return x, frac


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(G=200, K=8, hidden=(128, 64), B=48, lr=2e-3, steps=150, present=2),
           dict(G=256, K=6, hidden=(256, 128, 64), B=64, lr=1e-3, steps=150, present=2),
           dict(G=300, K=8, hidden=(256, 128, 64), B=32, lr=1e-3, steps=150, present=2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4040 + seed)
    ref = torch.softmax(torch.randn(cfg["K"], cfg["G"], generator=g) * 2.0, dim=1)
    model = DeconvMLP(cfg["G"], cfg["hidden"], cfg["K"], eps=1e-8 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = [_pseudobulk(g, cfg["B"], ref, cfg["present"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
