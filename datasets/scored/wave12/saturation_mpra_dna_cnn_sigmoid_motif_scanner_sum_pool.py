"""Sequence-to-expression CNN for an MPRA-style data set (100 bp one-hot enhancer sequences ->
standardised reporter expression): a conv layer of 32 motif scanners with sigmoid activations
('probability that motif k sits at position i'), a SUM over positions ('expected motif count'),
then a sigmoid hidden layer of 16 units and a linear read-out, MSE loss, Adam.  The scanners
start near sigmoid(0) = 0.5 at every position, so each 'count' is ~50 before any training and
the hidden layer's pre-activations are sums of 32 such counts times weights of up to +-0.18,
i.e. ~20 in magnitude: at step 0, 70-95% of the hidden sigmoid outputs have a derivative below
1e-4 and about half below 1e-9, the first updates push the rest further out, and from about step
100 on every unit is pinned at 0 or 1 for every sequence (derivative < 1e-9, below what even
Adam's eps lets through).  The read-out sees a constant input, no gradient reaches the scanners,
and the loss sits at the target variance for the whole run: a silent stall with no NaN.
Fixed: a BatchNorm1d on the pooled counts before the sigmoid layer (normalised
pre-activations), nothing else changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "hidden"
SOURCE = ("MPRA / enhancer-activity CNNs (e.g. de Boer et al. 2020, Agarwal et al. 2023) and "
          "DeepBind-style motif scanners with count-like sum pooling; the classic sigmoid "
          "saturation when un-normalised sums feed a sigmoid layer (LeCun et al. 1998 'Efficient BackProp')")


class MotifCountNet(nn.Module):
    def __init__(self, n_motifs=32, width=9, hidden=16, normalise=False):
        super().__init__()
        self.scan = nn.Conv1d(4, n_motifs, width, padding=width // 2)
        self.hidden = nn.Linear(n_motifs, hidden)
        self.readout = nn.Linear(hidden, 1)
        self.norm = nn.BatchNorm1d(n_motifs) if normalise else nn.Identity()

    def forward(self, x):
        occ = torch.sigmoid(self.scan(x))                       # (B, M, L)
        counts = occ.sum(-1)                                     # expected motif counts
        h = torch.sigmoid(self.hidden(self.norm(counts)))
        return self.readout(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    L, bs, steps, n_true = 100, 64, 300, 4
    motifs = [torch.randint(0, 4, (8,), generator=g) for _ in range(n_true)]
    effects = torch.randn(n_true, generator=g)

    def sample(n):
        idx = torch.randint(0, 4, (n, L), generator=g)
        counts = torch.zeros(n, n_true)
        for k, m in enumerate(motifs):
            c = torch.randint(0, 4, (n,), generator=g)          # 0-3 planted copies
            for j in range(3):
                rows = (c > j).nonzero().squeeze(-1)
                pos = torch.randint(0, L - 8, (rows.numel(),), generator=g)
                cols = pos.unsqueeze(1) + torch.arange(8).unsqueeze(0)
                idx[rows.unsqueeze(1), cols] = m.unsqueeze(0)
            counts[:, k] = c.float()
        y = counts @ effects + 0.3 * torch.randn(n, generator=g)
        x = F.one_hot(idx, 4).permute(0, 2, 1).float()
        return x, y

    _, y_ref = sample(2048)
    mu, sd = y_ref.mean(), y_ref.std()
    batches = []
    for s in range(steps):
        x, y = sample(bs)
        batches.append((x, (y - mu) / sd))

    model = MotifCountNet(normalise=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    mse = nn.MSELoss()

    def loss_fn(out, target):
        return mse(out, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
