"""Molecular-property encoder: a few label rows were recorded in the wrong unit.

An encoder-only transformer over SMILES-like token strings ([CLS] pooling, pre-norm,
Nesterov SGD) regresses a standardised solubility-like property.  The labels come from
several assay files; in one of them a handful of molecules were reported in mg/L instead of
g/L, so after standardisation those 3 rows (of 32) carry targets of magnitude ~1e2..3e3
instead of ~N(0, 1).  The run trains normally until that batch (step 120).  There the
squared error of the bad rows is ~1e5..1e6, the gradient into the regression head and the
blocks is orders of magnitude above the usual, the Nesterov momentum buffer carries the
kick on for the next steps, the outputs become huge (loss ~1e4..1e5), the gradients grow
with them and within ~5 steps the weights overflow: the loss is NaN from ~step 125 on.
Fix: drop the mis-unit rows from that batch (outlier filter on the labels); nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Unit mix-ups in merged assay labels (e.g. AqSolDB / ChEMBL mg/L vs g/L vs log units); "
          "'loss explodes after some iterations' reports traced to a few mislabeled rows")

V, T = 24, 20
CLS = 0


class PropertyEncoder(nn.Module):
    def __init__(self, d=32, h=4, n=2):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.pos = nn.Parameter(torch.zeros(T + 1, d))
        layer = nn.TransformerEncoderLayer(d, h, 64, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, n, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.reg_head = nn.Linear(d, 1)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        h = self.norm(self.encoder(x))
        return self.reg_head(h[:, 0]).squeeze(-1)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PropertyEncoder()
    w = torch.randn(V, generator=g) / 4
    steps, bs, bad_step = 200, 32, 120
    raw = []
    for _ in range(steps):
        ids = torch.randint(1, V, (bs, T), generator=g)
        counts = F.one_hot(ids, V).float().sum(1)
        y = counts @ w + 0.3 * torch.tanh(counts[:, 1] - counts[:, 2])
        raw.append((ids, y))
    ally = torch.cat([y for _, y in raw])
    mu, sd = ally.mean(), ally.std()
    batches = []
    for s, (ids, y) in enumerate(raw):
        y = (y - mu) / sd
        ids = torch.cat([torch.full((bs, 1), CLS), ids], 1)
        if s == bad_step:
            y = y.clone()
            bad = torch.tensor([3, 11, 17])
            y[bad] = (y[bad] * sd + mu) * 1000.0 / sd      # mg/L rows standardised as g/L
            if fixed:
                keep = y.abs() < 10
                ids, y = ids[keep], y[keep]
        batches.append((ids, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True)

    def loss_fn(pred, y):
        return F.mse_loss(pred, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
