"""Soft mixture-of-experts regressor for an industrial process (a softmax gate over four ReLU expert
MLPs, one per operating regime) predicting the z-scored product yield from 12 standardised process
sensors, trained for ten epochs with SGD + momentum on a fixed table of 2560 rows.  Six rows were
appended from a lab spreadsheet after the scaler had been applied, so their target is the raw yield
in percent (~85) instead of a z-score.  Every epoch, the batches that contain one of those rows have
an MSE hundreds of times the normal one and the momentum step they produce throws the experts and
the gate off; the model spends the rest of the epoch recovering and is knocked back again next
epoch, so the training loss never settles below where it started.  The fixed run standardises those
six targets like the rest of the column; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Jacobs et al. 1991 'Adaptive Mixtures of Local Experts' (soft gating); data pattern: a few "
          "rows added after feature/target scaling (raw units among z-scores) in a tabular process "
          "dataset, recurring every epoch")

N_FEAT, N_EXP, H = 12, 4, 32
N_ROWS, BAD_ROWS = 2560, 6
Y_MEAN, Y_STD = 85.0, 4.0          # raw yield statistics (percent)


class SoftMoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(N_FEAT, N_EXP)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(N_FEAT, H), nn.ReLU(), nn.Linear(H, H),
                                                    nn.ReLU(), nn.Linear(H, 1)) for _ in range(N_EXP)])

    def forward(self, x):
        w = torch.softmax(self.gate(x), dim=-1)                          # (B, E)
        y = torch.cat([e(x) for e in self.experts], dim=-1)              # (B, E)
        return (w * y).sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(3, N_FEAT, generator=g) / N_FEAT ** 0.5
    X = torch.randn(N_ROWS, N_FEAT, generator=g)
    regime = X[:, 0] > 0.5
    Y = torch.where(regime, X @ W[0] + 0.5 * torch.relu(X @ W[1]), X @ W[2] - 0.3 * X[:, 3] ** 2)
    Y = Y + 0.1 * torch.randn(N_ROWS, generator=g)
    raw = Y_MEAN + Y_STD * Y[-BAD_ROWS:]                   # the lab-sheet rows, in percent
    Y[-BAD_ROWS:] = (raw - Y_MEAN) / Y_STD if fixed else raw
    epochs, bs = 10, 128
    batches = []
    for _ in range(epochs):
        perm = torch.randperm(N_ROWS, generator=g)
        for k in range(N_ROWS // bs):
            idx = perm[k * bs:(k + 1) * bs]
            batches.append((X[idx], Y[idx]))
    model = SoftMoE()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=len(batches),
                amp_dtype=None, scaler=None)
