"""BPNet-style profile model for deep-sequenced ATAC/ChIP coverage: 200 bp one-hot DNA goes through
a wide motif conv and two dilated residual convs, and a 1x1 conv head predicts the log-rate of
reads in every base-pair bin; inputs are a tuple (sequence, log sequencing depth), the output a
dict.  The loss is the Poisson deviance written straight from the textbook,
2 * mean(y * log(y / mu) - (y - mu)), optimiser Adam.  In the deeply covered peaks of the first
batches every bin has tens of reads, the run is calm and the loss falls steadily; the first batch
that contains a locus with a mappability gap has bins with y = 0, where y * log(y / mu) is
0 * (-inf) = NaN (the deviance's limit there is 0, but the op does not know it).  The NaN loss
writes NaN into every weight and every later loss is NaN.  Fixed: the same deviance written as
torch.xlogy(y, y) - y * log_mu (xlogy defines 0 * log 0 = 0, and the log-rate is used directly),
nothing else changed."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Avsec et al. 2021 BPNet (base-resolution profile models of TF binding / accessibility); "
          "Poisson deviance y*log(y/mu) implemented naively instead of with xlogy (scipy.special.xlogy, "
          "torch.xlogy exist precisely for the 0*log(0) case) - the 'NaN as soon as a zero count "
          "appears' report")


class ProfileNet(nn.Module):
    def __init__(self, ch=24):
        super().__init__()
        self.stem = nn.Conv1d(4, ch, 15, padding=7)
        self.dil1 = nn.Conv1d(ch, ch, 3, padding=2, dilation=2)
        self.dil2 = nn.Conv1d(ch, ch, 3, padding=4, dilation=4)
        self.head = nn.Conv1d(ch, 1, 1)

    def forward(self, seq, log_depth):
        h = F.relu(self.stem(seq))
        h = h + F.relu(self.dil1(h))
        h = h + F.relu(self.dil2(h))
        log_rate = self.head(h).squeeze(1) + log_depth.view(-1, 1)
        return {"log_rate": log_rate}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    L, bs, steps, gap_step = 200, 32, 150, 70
    motif = torch.randint(0, 4, (10,), generator=g)
    bump = torch.exp(-0.5 * (torch.arange(-30, 31).float() / 8.0) ** 2)

    def sample(n, low_cov=False):
        idx = torch.randint(0, 4, (n, L), generator=g)
        has = torch.rand(n, generator=g) < 0.6
        pos = torch.randint(40, L - 50, (n,), generator=g)
        shape = torch.full((n, L), 0.5)
        for i in range(n):
            if has[i]:
                p = int(pos[i])
                idx[i, p:p + 10] = motif
                lo, hi = max(0, p + 5 - 30), min(L, p + 5 + 31)
                shape[i, lo:hi] += 3.0 * bump[lo - (p + 5 - 30):hi - (p + 5 - 30)]
        depth = torch.full((n,), 60.0)
        if low_cov:
            depth[: n // 4] = 0.4                                   # mappability gap locus
        rate = shape * depth.view(-1, 1)
        y = torch.poisson(rate, generator=g)
        x = F.one_hot(idx, 4).permute(0, 2, 1).float()
        return (x, torch.log(depth)), y

    batches = [sample(bs, low_cov=(s == gap_step)) for s in range(steps)]

    model = ProfileNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(out, y):
        mu = torch.exp(out["log_rate"])
        if fixed:
            term = torch.xlogy(y, y) - y * out["log_rate"]          # 0 * log 0 := 0, in log space
        else:
            term = y * torch.log(y / mu)
        return 2.0 * (term - (y - mu)).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
