"""Single-cell count autoencoder with a ReLU mean head and a hand-written Poisson NLL.

Mechanism: an imputation-style autoencoder (scScope / AutoImpute flavour) reads
log1p-normalised UMI counts and predicts the raw count mean of every gene through a ReLU
(to keep it non-negative). The output bias starts at the per-gene mean count, so every
mean is positive and the run is calm and improving. The loss is written by hand as
``mu - y*log(mu)``. For lowly expressed genes (mostly zero counts) the gradient pushes
``mu`` down by a constant amount per step; the first time a mean lands on an exact ReLU
zero, ``log(0) = -inf`` and ``0 * -inf = NaN`` (or ``+inf`` where y>0): the loss becomes
non-finite.

ORIGIN: ``decoder.out`` -- the ReLU-headed linear layer whose output is fed to the
unprotected ``log``.

Fix: the same Poisson NLL with an epsilon in the log (what ``F.poisson_nll_loss(...,
log_input=False)`` does, ``log(mu + 1e-8)``); model, data and optimiser unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "decoder.out"
SOURCE = ("scRNA-seq count autoencoders (DCA, scScope, AutoImpute) trained with a Poisson/NB "
          "likelihood; recurring GitHub issues 'loss becomes nan' traced to log(mu) where mu "
          "comes from a ReLU output that reaches exactly 0 (torch's PoissonNLLLoss adds eps=1e-8).")


class CountAE(nn.Module):
    def __init__(self, n_genes, hid, lat):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_genes, hid), nn.ReLU(), nn.Linear(hid, lat), nn.ReLU())
        self.decoder = nn.Sequential()
        self.decoder.add_module("hidden", nn.Linear(lat, hid))
        self.decoder.add_module("act", nn.ReLU())
        self.decoder.add_module("out", nn.Linear(hid, n_genes))
        self.decoder.add_module("mean_act", nn.ReLU())

    def forward(self, x):
        return self.decoder(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_genes = [160, 200, 240][seed % 3]
    hid = [64, 96, 48][seed % 3]
    lat = [16, 12, 10][seed % 3]
    lr = [1e-3, 7e-4, 1.2e-3][seed % 3]
    bsz = [64, 48, 80][seed % 3]
    steps = 200
    n_types = 5
    # gene programmes: log-normal base expression, a few marker genes per cell type
    base = torch.exp(torch.randn(n_genes, generator=g) * 1.2 - 2.0)
    prog = torch.ones(n_types, n_genes)
    for k in range(n_types):
        markers = torch.randperm(n_genes, generator=g)[: n_genes // 10]
        prog[k, markers] = 8.0
    rate = base[None] * prog
    rate = rate / rate.sum(1, keepdim=True)

    def make_batch():
        t = torch.randint(0, n_types, (bsz,), generator=g)
        lib = torch.exp(torch.randn(bsz, generator=g) * 0.3 + 6.0)  # ~400 UMIs per cell
        counts = torch.poisson(lib[:, None] * rate[t], generator=g)
        x = torch.log1p(counts / counts.sum(1, keepdim=True).clamp_min(1) * 1e4)
        return x, counts

    batches = [make_batch() for _ in range(steps)]
    model = CountAE(n_genes, hid, lat)
    with torch.no_grad():
        gene_mean = torch.stack([b[1] for b in batches[:20]]).mean((0, 1))
        model.decoder.out.bias.copy_(gene_mean + 3.0)
        model.decoder.out.weight.mul_(0.1)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    if fixed:
        def loss_fn(mu, y):
            return (mu - y * torch.log(mu + 1e-8)).mean()
    else:
        def loss_fn(mu, y):
            return (mu - y * torch.log(mu)).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
