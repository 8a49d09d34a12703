"""fast.ai-course style TabularModel (Adult income) rebuilt in plain PyTorch, with the continuous
columns normalised by hand but *not* imputed, so one batch carries NaN ages / hours-per-week.

Mechanism
---------
The fastai lesson uses ``procs=[Categorify, FillMissing, Normalize]``.  The student re-implements
the pipeline in PyTorch (embeddings for the categoricals, ``BatchNorm1d`` on the continuous
columns, then Linear-ReLU-BatchNorm blocks, as fastai's TabularModel) and normalises the
continuous columns with pandas ``(df - df.mean()) / df.std()`` -- which silently skips NaN -- but
forgets FillMissing.  Most rows are complete, so training is calm until the one batch that
contains rows with missing values.  In training mode ``bn_cont`` computes the batch mean/var
over the NaN column, so *every* row of the batch becomes NaN, the loss is NaN and the Adam step
writes NaN into all weights (and the BatchNorm running statistics): the run never recovers.

ORIGIN
------
None -- a corrupt (un-imputed) batch of data; no module is at fault.

Fix
---
fixed=True applies FillMissing (median fill) to that batch; everything else is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("fast.ai course lesson on tabular data (Adult dataset, TabularModel with "
          "Categorify/FillMissing/Normalize); forum threads 'loss is nan in tabular learner' caused by missing values")


class TabularModel(nn.Module):
    def __init__(self, emb_szs, n_cont, out_sz, layers, emb_drop=0.0):
        super().__init__()
        self.embeds = nn.ModuleList([nn.Embedding(ni, nf) for ni, nf in emb_szs])
        self.emb_drop = nn.Dropout(emb_drop)
        self.bn_cont = nn.BatchNorm1d(n_cont)
        n_emb = sum(nf for _, nf in emb_szs)
        sizes = [n_emb + n_cont] + layers
        blocks = []
        for i in range(len(layers)):
            blocks += [nn.Linear(sizes[i], sizes[i + 1]), nn.ReLU(inplace=True), nn.BatchNorm1d(sizes[i + 1])]
        blocks.append(nn.Linear(sizes[-1], out_sz))
        self.layers = nn.Sequential(*blocks)

    def forward(self, x_cat, x_cont):
        x = torch.cat([e(x_cat[:, i]) for i, e in enumerate(self.embeds)], 1)
        x = self.emb_drop(x)
        x = torch.cat([x, self.bn_cont(x_cont)], 1)
        return self.layers(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    cards = [9, 16, 7, 15, 6, 5]           # workclass, education, marital, occupation, relationship, race
    emb_szs = [(c + 1, min(10, (c + 1) // 2 + 1)) for c in cards]
    n_cont = 3                             # age, fnlwgt, hours-per-week (normalised)
    layers = [[200, 100], [128, 64], [256, 128]][seed % 3]
    bs = [64, 128, 96][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bad_step = [34, 51, 18][seed % 3]
    steps = 80

    w_cat = [torch.randn(c + 1, generator=g) for c in cards]
    w_cont = torch.tensor([1.5, 0.0, 1.0])
    batches = []
    for t in range(steps):
        x_cat = torch.stack([torch.randint(1, c + 1, (bs,), generator=g) for c in cards], 1)
        x_cont = torch.randn(bs, n_cont, generator=g)
        logit = sum(w[x_cat[:, i]] for i, w in enumerate(w_cat)) * 1.2 + x_cont @ w_cont - 0.8
        y = (torch.sigmoid(logit) > torch.rand(bs, generator=g)).long()     # >50k or not
        if t == bad_step:
            rows = torch.randperm(bs, generator=g)[:3]
            x_cont[rows, 0] = float("nan")          # missing age
            x_cont[rows[:1], 2] = float("nan")      # missing hours-per-week
            if fixed:
                x_cont = torch.nan_to_num(x_cont, nan=0.0)   # FillMissing: median (0 after normalising)
        batches.append(((x_cat, x_cont), y))

    model = TabularModel(emb_szs, n_cont, 2, layers, emb_drop=0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
