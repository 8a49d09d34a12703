"""D-GEX (Chen et al. 2016) style gene-expression inference: an MLP maps the L1000
landmark genes (log2 expression, non-negative, un-centred: values 0..14) to per-gene
standardised expression of target genes.  Trained with SGD + momentum at an lr taken from a
Keras example that trained on centred inputs.

Mechanism
---------
Every input to the two hidden Linears is non-negative: the landmarks are positive log2
values with mean ~7, and ``net.2`` receives ReLU outputs.  For such a unit the gradient
dL/dw_j = sum_b delta_b * x_bj has the same sign for all its incoming weights (that of the
batch-summed delta) and is much larger than dL/db.  With lr=0.15-0.3 and momentum 0.9 the
first update inflates the first-layer activations, so the second
hidden layer gets large, coherent, sign-uniform updates: every unit whose delta was
positive is pushed so far negative that w.h + b < 0 for every profile, and no sample can
revive it because h >= 0.  The second ReLU (``net.3``) goes from ~10% to ~65% dead in
five steps and is 100% dead by the end (the first ReLU follows more slowly, 55-85%).  The
network then outputs the per-gene mean (0 after standardisation) and the MSE plateaus at
the target variance (~1.0) for the rest of the run.

ORIGIN
------
``net.3``: the ReLU after the second Linear; it is the first to die (already twice as many dead
units after one step) and is fully dead when the loss plateaus, cutting the gradient to
everything below it.

Fix
---
lr 10x lower (0.015-0.03, what the centred-input recipe would correspond to); model, data,
momentum and batches unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.3"
SOURCE = ("D-GEX: deep learning for gene expression inference from L1000 landmark genes "
          "(Chen et al., Bioinformatics 2016); dying ReLU with non-negative uncentred log "
          "expression inputs and a too-large SGD momentum step")


def _data(g, n, n_land, n_target, rank):
    # latent programmes drive both landmark and target genes
    z = torch.randn(n, rank, generator=g)
    A = torch.randn(rank, n_land, generator=g) * 0.8
    base = 4.0 + 6.0 * torch.rand(n_land, generator=g)
    land = (base + z @ A + 0.3 * torch.randn(n, n_land, generator=g)).clamp(0.0, 14.0)
    Bm = torch.randn(rank, n_target, generator=g)
    tgt = z @ Bm + 0.4 * torch.tanh(z[:, :1] * z[:, 1:2]) + 0.3 * torch.randn(n, n_target, generator=g)
    tgt = (tgt - tgt.mean(0)) / tgt.std(0)                  # per-gene standardisation
    return land, tgt


class DGEX(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        h1, h2 = hidden
        self.net = nn.Sequential(
            nn.Linear(n_in, h1), nn.ReLU(),
            nn.Linear(h1, h2), nn.ReLU(),
            nn.Linear(h2, n_out))

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_land=64, n_target=96, hidden=(256, 256), B=32, lr=0.2, steps=80),
           dict(n_land=48, n_target=128, hidden=(192, 128), B=48, lr=0.3, steps=100),
           dict(n_land=80, n_target=64, hidden=(320, 160), B=40, lr=0.15, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    steps, B = cfg["steps"], cfg["B"]
    land, tgt = _data(g, steps * B, cfg["n_land"], cfg["n_target"], rank=16)
    model = DGEX(cfg["n_land"], cfg["hidden"], cfg["n_target"])
    lr = cfg["lr"] / 10 if fixed else cfg["lr"]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(land[i * B:(i + 1) * B], tgt[i * B:(i + 1) * B]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps)
