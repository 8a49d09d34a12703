"""Entity-embedding sales regressor run at fit_one_cycle's max_lr as a constant SGD lr.

Mechanism: the entity-embedding network of Guo & Berkhahn (Rossmann store sales): one
embedding per categorical column (store, weekday, month, promo, state, ...), concatenated
with standardised continuous columns and fed to a two-layer ELU MLP regressing the z-scored
log-sales with MSE.  The lr finder suggested max_lr ~ 0.3-0.6 for a one-cycle schedule,
which warms up from max_lr / 25 and anneals; the training script used that value as a
constant lr for SGD with momentum 0.9.  With no warmup the first steps overshoot the MSE
valley (update/weight ratios ~1): each step multiplies the prediction error, the loss grows
geometrically and overflows to inf/NaN within ~10 steps.

ORIGIN is None: the optimiser setting is the fault; no module is mis-specified.

Fix: lr = max_lr / 25 (the schedule's starting value); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Entity embeddings of categorical variables (Guo & Berkhahn 2016, Rossmann); "
          "fastai lr_find / fit_one_cycle max_lr reused as a constant learning rate.")


class EntityEmbeddingNet(nn.Module):
    def __init__(self, cards, emb_dims, n_cont, hidden):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, e) for c, e in zip(cards, emb_dims)])
        d = sum(emb_dims) + n_cont
        self.mlp = nn.Sequential(nn.Linear(d, hidden[0]), nn.ELU(),
                                 nn.Linear(hidden[0], hidden[1]), nn.ELU(),
                                 nn.Linear(hidden[1], 1))

    def forward(self, x_cat, x_cont):
        e = torch.cat([emb(x_cat[:, j]) for j, emb in enumerate(self.embs)], 1)
        return self.mlp(torch.cat([e, x_cont], 1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2200 + seed)
    cards = [1115, 7, 12, 2, 12, 31, 4]
    emb_dims = [[10, 4, 6, 1, 6, 10, 3], [16, 4, 6, 2, 6, 8, 3], [8, 3, 4, 1, 4, 6, 2]][seed]
    n_cont = 4
    hidden = [[256, 128], [512, 256], [128, 64]][seed]
    bs = [256, 128, 512][seed]
    steps = [120, 130, 110][seed]
    lr = [0.5, 0.3, 0.6][seed]
    if fixed:
        lr = lr / 25                      # one-cycle's starting lr, max_lr / div_factor

    n = bs * steps
    x_cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in cards], 1)
    x_cont = torch.randn(n, n_cont, generator=g)
    effs = [torch.randn(c, generator=g) for c in cards]
    wts = [1.0, 0.5, 0.3, 0.6, 0.2, 0.2, 0.3]
    s = sum(w * e[x_cat[:, j]] for j, (w, e) in enumerate(zip(wts, effs)))
    s = s + 0.5 * x_cont[:, 0] - 0.3 * x_cont[:, 1] + 0.4 * effs[1][x_cat[:, 1]] * (x_cat[:, 3] * 2 - 1)
    y = (s - s.mean()) / s.std() + 0.3 * torch.randn(n, generator=g)
    batches = [((x_cat[i * bs:(i + 1) * bs], x_cont[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]

    model = EntityEmbeddingNet(cards, emb_dims, n_cont, hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
