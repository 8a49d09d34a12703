"""Patient-level phenotype from a single-cell profile: cell-set model with SUM pooling into tanh.

Mechanism: every patient is a set of 600-1500 cells (log-normalised expression of marker
genes). A shared cell encoder (Linear-ReLU-Linear-ReLU) embeds each cell, the embeddings are
summed over the cells of the patient, and a ``Linear -> tanh`` patient layer feeds the
disease head (the label depends on the fraction of an expanded cell state). The ReLU cell
embeddings are non-negative with a common positive mean, so the summed vector is ~N times that
mean: every pre-tanh unit is tens to hundreds large with the same sign for all patients. tanh
returns exactly +-1, its derivative is exactly 0, the encoder gets no gradient and the head
only sees a constant vector -- the loss sits at chance level.

ORIGIN: ``patient_act`` -- the tanh that saturates on the summed cell embeddings.

Fix: mean pooling over cells (the set size no longer scales the pre-activations); same
model, data and optimiser otherwise.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "patient_act"
SOURCE = ("Patient-level single-cell classifiers (CloudPred, ProtoCell, scRNA multiple-instance "
          "set models); DeepSets-style sum pooling over thousands of cells feeding a tanh layer "
          "-- reports of 'loss stuck at 0.69, gradients zero' fixed by mean pooling.")


class CellSetNet(nn.Module):
    def __init__(self, n_genes, hid, pool):
        super().__init__()
        self.cell_encoder = nn.Sequential(nn.Linear(n_genes, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU())
        self.patient = nn.Linear(hid, hid)
        self.patient_act = nn.Tanh()
        self.head = nn.Linear(hid, 1)
        self.pool = pool

    def forward(self, cells, mask):
        e = self.cell_encoder(cells) * mask[..., None]
        if self.pool == "sum":
            z = e.sum(1)
        else:
            z = e.sum(1) / mask.sum(1, keepdim=True)
        return self.head(self.patient_act(self.patient(z))).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_genes = [24, 32, 20][seed % 3]
    hid = [16, 24, 16][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    n_lo, n_hi = [(600, 1200), (800, 1500), (600, 1000)][seed % 3]
    bsz = 8
    steps = 150
    n_types = 4
    centers = torch.randn(n_types + 1, n_genes, generator=g).abs() * 1.5

    def make_batch():
        y = (torch.randperm(bsz, generator=g) < bsz // 2).float()  # case-control balanced batches
        cells = torch.zeros(bsz, n_hi, n_genes)
        mask = torch.zeros(bsz, n_hi)
        for b in range(bsz):
            n = int(torch.randint(n_lo, n_hi + 1, (1,), generator=g))
            frac = 0.25 if y[b] > 0 else 0.03  # expanded disease-associated cell state
            t = torch.randint(0, n_types, (n,), generator=g)
            t = torch.where(torch.rand(n, generator=g) < frac, torch.full_like(t, n_types), t)
            cells[b, :n] = torch.relu(centers[t] + 0.5 * torch.randn(n, n_genes, generator=g))
            mask[b, :n] = 1.0
        return (cells, mask), y

    batches = [make_batch() for _ in range(steps)]
    model = CellSetNet(n_genes, hid, "mean" if fixed else "sum")
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
