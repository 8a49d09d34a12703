"""Siamese character-GRU that regresses the normalised Levenshtein distance (LDN, in [0, 1])
between two ASJP-transcribed word forms of the same concept in two related low-resource
languages, for automatic cognate scoring / dialectometry.  MSE loss, Adam.

Mechanism: the targets are precomputed offline as edit_distance(a, b) / max(len(a), len(b)).
For concepts that are not attested in one of the word lists, the form is exported as an empty
string instead of being dropped; when both forms of a pair are empty (or the export wrote the
pair twice with empty cells) the preprocessing computes 0 / 0 and writes NaN as the target.
All shards are clean except one whose position in the epoch depends on the seed; that batch
holds a few NaN targets (and all-padding inputs), so nn.MSELoss returns NaN at that step, the
NaN gradient is written into Adam's moments and every parameter becomes NaN from then on.

ORIGIN: None -- the corruption is in one batch of data, not in any module; the model itself
is numerically fine before and after the bad rows are removed.

Fix (fixed=True): the same batches with the NaN / empty-form rows filtered out before training
(``keep = torch.isfinite(y)``).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("ASJP / lexicostatistic word lists with unattested concepts exported as empty cells; "
          "LDN = LD / max(len) giving 0/0 for empty pairs (Wichmann et al. 2010 ASJP distances); "
          "PyTorch forum 'MSE loss becomes nan, one target is nan'; siamese char encoders for "
          "cognate detection (Rama 2016).")

N_SYMBOLS = 41   # the ASJP code has 41 symbols; 0 is padding


class SiameseCharGRU(nn.Module):
    def __init__(self, emb, hidden, mlp):
        super().__init__()
        self.emb = nn.Embedding(N_SYMBOLS + 1, emb, padding_idx=0)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.head = nn.Sequential(nn.Linear(2 * hidden, mlp), nn.ReLU(), nn.Linear(mlp, 1))

    def encode(self, w):
        _, h = self.gru(self.emb(w))
        return h[-1]

    def forward(self, a, b):
        ea, eb = self.encode(a), self.encode(b)
        return self.head(torch.cat([(ea - eb).abs(), ea * eb], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [48, 64, 32][seed % 3]
    mlp = [64, 32, 96][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [32, 24, 48][seed % 3]
    bad_step = [61, 34, 88][seed % 3]
    n_bad = [2, 3, 1][seed % 3]
    steps = 160
    L = 7

    torch.manual_seed(seed)
    model = SiameseCharGRU(24, hidden, mlp)

    batches = []
    for step in range(steps):
        a = torch.randint(1, N_SYMBOLS + 1, (bs, L), generator=g)
        # the second form is a sound-changed copy: each position mutated with a pair-specific rate
        rate = torch.rand(bs, 1, generator=g)
        mutate = torch.rand(bs, L, generator=g) < rate
        b = torch.where(mutate, torch.randint(1, N_SYMBOLS + 1, (bs, L), generator=g), a)
        dist = (a != b).float().sum(1)
        length = torch.full((bs,), float(L))
        if step == bad_step:
            idx = torch.randperm(bs, generator=g)[:n_bad]
            a[idx] = 0                      # empty forms -> all padding
            b[idx] = 0
            dist[idx] = 0.0
            length[idx] = 0.0
        y = dist / length                   # 0/0 -> NaN for the empty pairs
        if fixed:
            keep = torch.isfinite(y)
            a, b, y = a[keep], b[keep], y[keep]
        batches.append(((a, b), y))

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(),
                batches=batches, steps=steps)
