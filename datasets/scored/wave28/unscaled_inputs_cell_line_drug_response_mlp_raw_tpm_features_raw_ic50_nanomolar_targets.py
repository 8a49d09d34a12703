"""Drug-response regressor for cancer cell lines (GDSC/CCLE-style): bulk RNA-seq expression
of 200 landmark genes -> 3-layer ReLU MLP -> IC50; MSE, RMSprop.

Mechanism (unscaled_inputs): the expression matrix is fed as raw TPM (0 to ~1e4, a few
genes in the thousands, most near zero) and the target is the raw IC50 in nanomolar
(log-normal, ~1 nM to ~1e6 nM) - neither the usual log1p/standardisation of the features nor
the log10 (pIC50) transform of the response was applied. From step 0 the MSE is ~1e7-1e9 and
is dominated by a handful of resistant lines with IC50 in the 1e5-1e6 range; RMSprop's
normalised, bounded steps cannot bring the output to that scale, the activations are
driven by the few highly-expressed genes, and the loss never moves off its starting level,
while the same network on scaled data learns.

ORIGIN: `mlp.0`, the first Linear, which receives the unscaled TPM features (the unscaled
targets hit the loss directly).

Fix: features log1p(TPM) then z-scored per gene; targets log10(IC50) z-scored (statistics
from the training set); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("GDSC / CCLE drug-response modelling practice (log1p TPM features, ln/log10 IC50 "
          "targets, e.g. DeepDR, tCNNS); 'MSE loss is huge and does not decrease' reports "
          "for raw-scale regression targets")

N_GENES = 200


def _cell_lines(g, n):
    gen0 = torch.Generator().manual_seed(41)
    base = torch.randn(N_GENES, generator=gen0) * 1.5 + 2.0          # log-TPM gene means
    prog = torch.randn(4, N_GENES, generator=gen0) * 0.8               # pathway programs
    markers = torch.randperm(N_GENES, generator=gen0)[:12]
    w = torch.randn(12, generator=gen0) * 0.35
    z = torch.randn(n, 4, generator=g)
    log_tpm = base + z @ prog + 0.4 * torch.randn(n, N_GENES, generator=g)
    tpm = torch.exp(log_tpm).clamp(max=2e4)
    lx = torch.log1p(tpm)
    log10_ic50 = 2.5 + (lx[:, markers] - lx[:, markers].mean(0)) @ w + 0.3 * torch.randn(n, generator=g)
    ic50_nm = 10.0 ** log10_ic50
    return tpm, ic50_nm


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15000 + seed)
    hid = [128, 64, 96][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [2e-4, 3e-4, 1e-4][seed % 3]
    steps = 150

    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(nn.Linear(N_GENES, hid), nn.ReLU(),
                                          nn.Linear(hid, hid), nn.ReLU(),
                                          nn.Linear(hid, 1)))
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.99)

    def loss_fn(out, y):
        return F.mse_loss(out.squeeze(-1), y)

    x, y = _cell_lines(g, bs * steps)
    if fixed:
        lx = torch.log1p(x)
        x = (lx - lx.mean(0)) / (lx.std(0) + 1e-6)
        ly = torch.log10(y)
        y = (ly - ly.mean()) / ly.std()
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
