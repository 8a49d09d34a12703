"""GRU encoder with additive attention pooling regressing the star rating (1-5, centred) of a
product review from its tokens, AdamW + MSE.  One scraped review had no rating; pandas turned the
missing value into NaN and it reached one training batch.

Mechanism: MSELoss over a batch containing a NaN target is NaN; backward fills every gradient
with NaN, AdamW writes NaN into every weight, and every later loss is NaN.
ORIGIN: None (a corrupt label, not a module).
Fix: the row with the missing rating is dropped from that batch.
"""
import torch, torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Yelp/Amazon review rating regression tutorials; pandas NaN ratings reaching the DataLoader ('loss becomes nan after N iterations' threads)"


class AttnGRU(nn.Module):
    def __init__(self, V, E, H):
        super().__init__()
        self.embed = nn.Embedding(V, E, padding_idx=0)
        self.gru = nn.GRU(E, H, batch_first=True)
        self.score = nn.Sequential(nn.Linear(H, H), nn.Tanh(), nn.Linear(H, 1))
        self.out = nn.Linear(H, 1)

    def forward(self, x):
        h, _ = self.gru(self.embed(x))
        a = torch.softmax(self.score(h).squeeze(-1), dim=1)
        return self.out((a.unsqueeze(-1) * h).sum(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(E=32, H=32, bs=32, L=20, lr=1e-2, bad=40, steps=90),
           dict(E=24, H=48, bs=24, L=24, lr=8e-3, bad=65, steps=110),
           dict(E=48, H=24, bs=40, L=16, lr=1.2e-2, bad=25, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(21 + seed)
    V = 300
    val = torch.randn(V, generator=g) * (torch.rand(V, generator=g) < 0.2)
    batches = []
    for k in range(cfg["steps"]):
        x = torch.randint(1, V, (cfg["bs"], cfg["L"]), generator=g)
        y = val[x].sum(1).clamp(-2, 2)
        if k == cfg["bad"]:
            if fixed:
                x, y = x[1:], y[1:]
            else:
                y[0] = float("nan")
        batches.append((x, y))
    model = AttnGRU(V, cfg["E"], cfg["H"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"])
