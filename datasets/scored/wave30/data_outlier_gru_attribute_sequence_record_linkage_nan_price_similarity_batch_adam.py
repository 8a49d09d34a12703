"""GRU record-linkage model over a sequence of per-attribute similarity vectors.

Model: a candidate pair of product records is described attribute by attribute (title, brand,
model number, category, price, description, ...); for each attribute a preprocessing job emits
a small vector of similarity scores (Jaccard, Jaro-Winkler, TF-IDF cosine, relative numeric
difference, missing flags). A GRU `gru` reads the attributes in a fixed order, and a Linear
`head` turns its last hidden state into a match logit. Loss: BCEWithLogitsLoss; optimiser Adam.

Mechanism: the relative price difference is computed upstream as |p1 - p2| / max(p1, p2).
One shard of candidate pairs (two vendors that list bundled items with price 0.00) produces
0 / 0 = NaN for that feature in a handful of rows. That batch (the step varies by seed) carries
NaN into the GRU's input projection; every hidden state of those rows becomes NaN, the batch
loss is NaN, and the run is finished.

ORIGIN: `gru` -- the first module the corrupt batch reaches; its input projection is where NaN
first appears in the forward pass.

Fix: sanitise the batch as the data loader should -- replace non-finite similarity values by 0
and raise the attribute's "missing" flag (torch.nan_to_num + flag). Same model, optimiser and
steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "gru"
SOURCE = ("Magellan / DeepMatcher-style attribute similarity features for entity matching "
          "(Abt-Buy, Amazon-Google); a 0/0 relative-difference feature for zero prices that "
          "reaches the model as NaN in one shard and turns the loss NaN")


class AttrGRU(nn.Module):
    def __init__(self, n_sim, hidden):
        super().__init__()
        self.gru = nn.GRU(n_sim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_attr = [6, 8, 5][seed % 3]
    n_sim = [5, 6, 4][seed % 3]                     # last column = "missing" flag
    hidden = [32, 48, 64][seed % 3]
    batch = [64, 48, 96][seed % 3]
    steps = [120, 140, 100][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bad_step = [37, 81, 58][seed % 3]
    price_attr = 2

    w_attr = torch.rand(n_attr, generator=g) + 0.3          # how informative each attribute is
    batches = []
    for step in range(steps):
        y = (torch.rand(batch, generator=g) < 0.4).float()
        base = torch.where(y.view(-1, 1, 1) > 0, torch.full((1, 1, 1), 0.75),
                           torch.full((1, 1, 1), 0.35))
        spread = 0.25 / w_attr.view(1, -1, 1)
        sims = (base + spread * torch.randn(batch, n_attr, n_sim - 1, generator=g)).clamp(0, 1)
        missing = (torch.rand(batch, n_attr, 1, generator=g) < 0.05).float()
        sims = sims * (1 - missing)
        x = torch.cat([sims, missing], dim=2)
        if step == bad_step:
            rows = torch.randperm(batch, generator=g)[:5]
            x[rows, price_attr, 0] = float("nan")           # |0 - 0| / max(0, 0)
            if fixed:
                bad = ~torch.isfinite(x[:, price_attr, 0])
                x[:, price_attr, 0] = torch.nan_to_num(x[:, price_attr, 0], nan=0.0)
                x[bad, price_attr, n_sim - 1] = 1.0
        batches.append((x, y))

    model = AttrGRU(n_sim, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
