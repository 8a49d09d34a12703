"""Learned motion model for a multi-object tracker: a GRU reads the last T box displacements of a
tracklet and predicts the next one (replacing SORT's constant-velocity Kalman step).

Mechanism: training pairs are cut from tracker output, with displacements standardised by the
dataset std (about 2 px per frame for x, y, w, h).  In one frame of one sequence the detector
dropped out and the exporter wrote the lost tracks (all but a few of the frame's) as the MOTChallenge placeholder box
(-1, -1, -1, -1).  The "next displacement" of those tracklets is then (-1 - x) / 2 px: hundreds
of standard deviations, all with the same sign, instead of about 1.  That single batch gives an
MSE in the tens of thousands and a gradient orders of magnitude above normal; SGD with momentum
throws the head and the GRU far off, the following updates keep overshooting and the loss goes
non-finite some steps later.  The corrupt step varies with the seed.

ORIGIN: None.  The corrupt labels enter through the loss of one batch; no module misbehaves
before that batch (the first module they hit is the output layer, head.4).

Fix: gate the corrupt rows out of that batch, as trackers gate associations: drop tracklets
whose target displacement exceeds 6 std.  All other batches are identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("MOT17/MOT20 tracklets with identity switches used as motion-model supervision; "
          "SORT/DeepSORT use chi-square gating of the Kalman innovation to reject such jumps "
          "(Wojke et al. 2017); outlier-label batches under SGD momentum")


class GRUMotionModel(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, 4))

    def forward(self, seq):
        h, _ = self.gru(seq)
        return self.head(h[:, -1])


def _tracklets(g, n, T):
    # standardised displacements (dx, dy, dw, dh) of a roughly constant-velocity walker
    v0 = torch.randn(n, 1, 4, generator=g) * torch.tensor([1.2, 0.8, 0.3, 0.3])
    acc = torch.cumsum(torch.randn(n, T + 1, 4, generator=g) * 0.12, dim=1)
    d = v0 + acc + 0.25 * torch.randn(n, T + 1, 4, generator=g)
    return d[:, :T], d[:, T]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    batch = [32, 24, 40][seed % 3]
    lr = [0.02, 0.025, 0.02][seed % 3]
    T = [8, 10, 6][seed % 3]
    bad_step = [31, 22, 40][seed % 3]
    steps = 160
    model = GRUMotionModel(hidden)
    batches = []
    for t in range(steps):
        x, y = _tracklets(g, batch, T)
        if t == bad_step:
            # frames where the track was lost: the exporter wrote the "-1,-1,-1,-1" box and the
            # displacement to it was standardised like any other (x, y in px / 2 px std)
            lost = torch.randperm(batch, generator=g) >= max(2, batch // 10)   # all but a few
            cxcy = torch.rand(batch, 2, generator=g) * torch.tensor([1920.0, 1080.0])
            wh = 40 + 80 * torch.rand(batch, 2, generator=g)
            y = y.clone()
            y[lost, :2] = (-1.0 - cxcy[lost]) / 2.0
            y[lost, 2:] = (-1.0 - wh[lost]) / 2.0
            if fixed:                                            # chi-square style gate
                keep = y.abs().max(dim=1).values < 6.0
                x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": F.mse_loss, "batches": batches,
            "steps": steps}
