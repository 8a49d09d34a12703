"""DLRM click model (bottom MLP on dense features, nn.EmbeddingBag tables for the
categorical ids, pairwise dot-product interaction, top MLP) called as
model(dense, sparse) with a tuple input.

Mechanism: one day's shard arrives with a missing dense counter exported as NaN
instead of being imputed. The NaNs enter the bottom MLP, the interaction and the
BCE loss: the loss of that step is NaN, backward writes NaN into every gradient
and Adam copies them into every weight, so the run never recovers.

ORIGIN: None - the corrupt batch, not a module, is the cause (the NaN merely
enters through the bottom MLP).

Fix: impute the missing values of that shard (nan_to_num with the column mean 0
of the standardised features) - all other batches are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Criteo/DLRM preprocessing: missing integer features must be filled before "
          "log-transform/standardisation; NaN rows from an un-imputed shard reported "
          "as 'loss becomes nan' in DLRM/TorchRec user threads.")


class DLRM(nn.Module):
    def __init__(self, n_dense, cards, d):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(n_dense, 32), nn.ReLU(), nn.Linear(32, d), nn.ReLU())
        self.tables = nn.ModuleList([nn.EmbeddingBag(c, d, mode="sum") for c in cards])
        n_f = len(cards) + 1
        self.top = nn.Sequential(nn.Linear(d + n_f * (n_f - 1) // 2, 32), nn.ReLU(), nn.Linear(32, 1))
        iu = torch.triu_indices(n_f, n_f, offset=1)
        self.register_buffer("iu0", iu[0], persistent=False)
        self.register_buffer("iu1", iu[1], persistent=False)

    def forward(self, dense, sparse):
        z = self.bottom(dense)
        embs = [t(sparse[:, i:i + 1]) for i, t in enumerate(self.tables)]
        feats = torch.stack([z] + embs, dim=1)               # (B, F, d)
        inter = feats @ feats.transpose(1, 2)
        inter = inter[:, self.iu0, self.iu1]
        return self.top(torch.cat([z, inter], dim=1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=8, bs=64, lr=5e-3, bad=35, steps=80),
           dict(d=16, bs=48, lr=4e-3, bad=52, steps=90),
           dict(d=12, bs=96, lr=2e-3, bad=20, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    n_dense, cards = 6, [50, 30, 20]
    model = DLRM(n_dense, cards, cfg["d"])
    w = torch.randn(n_dense, generator=g)
    item_bias = [torch.randn(c, generator=g) for c in cards]
    batches = []
    for s in range(cfg["steps"]):
        dense = torch.randn(cfg["bs"], n_dense, generator=g)
        sparse = torch.stack([torch.randint(0, c, (cfg["bs"],), generator=g) for c in cards], 1)
        logit = dense @ w * 1.5 + 1.5 * sum(item_bias[i][sparse[:, i]] for i in range(len(cards)))
        y = (torch.rand(cfg["bs"], generator=g) < torch.sigmoid(logit)).float()
        if s == cfg["bad"]:
            miss = torch.rand(cfg["bs"], generator=g) < 0.3
            dense[miss, 2] = float("nan")                     # un-imputed missing counter
            if fixed:
                dense = torch.nan_to_num(dense, nan=0.0)
        batches.append(((dense, sparse), y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(),
                batches=batches, steps=cfg["steps"])
