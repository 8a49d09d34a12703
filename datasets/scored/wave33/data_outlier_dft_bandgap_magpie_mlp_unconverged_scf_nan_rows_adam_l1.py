"""Band-gap regression from Magpie-style composition descriptors (mean / range / mode of
elemental electronegativity, row, column, Mendeleev number, valence-electron counts, ...)
with a SiLU MLP, trained with an L1 (MAE) loss as in matbench_expt_gap / MP band-gap tasks.

Mechanism: the training table was exported from a high-throughput DFT database in which a few
calculations never reached SCF convergence; their band gap was written as NaN (pandas
`to_csv` of a missing value, later read back as float). Those rows were not dropped, and the
mini-batch that contains them produces a NaN L1 loss (the mean over the batch is NaN). With
L1 the backward of |NaN| is sign(NaN) = 0, so the weights happen to stay finite, but the loss
of that step -- and any epoch average or early-stopping metric built from it -- is NaN.
All other rows are clean.
The step at which the first bad row is drawn depends on the shuffle (seed).

ORIGIN: None. The corruption is in the targets, which enter only through the loss; no module
of the model is where it starts.

Fix: drop the rows whose target is not finite before batching (`df.dropna(subset=['gap'])`),
i.e. the bad batch is filtered.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Known pattern: NaN targets from failed / unconverged DFT calculations left in "
          "high-throughput datasets (Materials Project / AFLOW exports; matminer users reporting "
          "'loss becomes nan' traced to missing band_gap values); PyTorch forum 'NaN loss caused "
          "by NaN in labels'.")


class GapMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, c = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(c, width), nn.SiLU()]
            c = width
        layers.append(nn.Linear(c, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [2, 3, 4][seed % 3]
    width = [64, 128, 96][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150
    n_feat = 24
    torch.manual_seed(seed)
    model = GapMLP(n_feat, width, depth)
    x = torch.randn(3000, n_feat, generator=g)
    w = torch.randn(n_feat, generator=g) / n_feat ** 0.5
    # gap (eV) >= 0: softplus of an ionicity-like score
    y = torch.nn.functional.softplus(2.0 * (x @ w) + 0.5 * x[:, 0] * x[:, 1]) * 1.5
    y = y + 0.05 * torch.randn(3000, generator=g)
    batches = []
    bad_step = [40, 75, 110][seed % 3] + int(torch.randint(0, 10, (1,), generator=g))
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        xb, yb = x[idx].clone(), y[idx].clone()
        if s == bad_step:
            k = int(torch.randint(1, 4, (1,), generator=g))
            rows = torch.randperm(bs, generator=g)[:k]
            if fixed:
                keep = torch.ones(bs, dtype=torch.bool)
                keep[rows] = False
                xb, yb = xb[keep], yb[keep]
            else:
                yb[rows] = float("nan")  # unconverged SCF -> NaN gap
        batches.append((xb, yb))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.L1Loss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
