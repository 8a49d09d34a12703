"""Entity-embedding network (Guo & Berkhahn 2016, Rossmann store sales): embeddings for store,
day-of-week, month and promo plus two continuous features, concatenated into a
Linear-ReLU-Linear-ReLU-Linear MLP that regresses standardised log sales with MSE.

Mechanism: the user reused lr=0.5 from their embedding-only linear baseline with plain SGD.
On the first steps the huge update on fc1 (its bias and the embedding inputs) overshoots and
drives every fc1 pre-activation negative for all inputs: the 1st ReLU layer dies, no gradient
reaches fc1 or the embeddings again, and the network output collapses to the fc3 bias (the
mean): MSE plateaus near the target variance for the rest of the run.

ORIGIN: act1, the first ReLU, whose units all die.
Fix: lr=0.05 (same SGD, everything else unchanged).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "act1"
SOURCE = "Guo & Berkhahn 2016 'Entity Embeddings of Categorical Variables' (Rossmann); dying ReLU after large-lr SGD steps"


class EntityNet(nn.Module):
    def __init__(self, n_store, h1, h2):
        super().__init__()
        self.store = nn.Embedding(n_store, 10)
        self.dow = nn.Embedding(7, 6)
        self.month = nn.Embedding(12, 6)
        self.promo = nn.Embedding(2, 1)
        self.fc1 = nn.Linear(10 + 6 + 6 + 1 + 2, h1)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(h1, h2)
        self.act2 = nn.ReLU()
        self.fc3 = nn.Linear(h2, 1)

    def forward(self, cat, cont):
        z = torch.cat([self.store(cat[:, 0]), self.dow(cat[:, 1]), self.month(cat[:, 2]), self.promo(cat[:, 3]), cont], 1)
        return self.fc3(self.act2(self.fc2(self.act1(self.fc1(z))))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h1=64, h2=32, bs=64, lr=0.5), dict(h1=96, h2=48, bs=128, lr=0.8), dict(h1=48, h2=24, bs=48, lr=0.6)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    n_store = 50
    model = EntityNet(n_store, cfg["h1"], cfg["h2"])
    store_eff = torch.randn(n_store, generator=g) * 0.8
    dow_eff = torch.tensor([0.3, 0.1, 0.0, 0.0, 0.2, 0.5, -1.5])
    month_eff = torch.sin(torch.arange(12) / 12 * 6.283) * 0.3
    steps = 100
    batches = []
    for _ in range(steps):
        B = cfg["bs"]
        cat = torch.stack([torch.randint(0, n_store, (B,), generator=g), torch.randint(0, 7, (B,), generator=g),
                           torch.randint(0, 12, (B,), generator=g), torch.randint(0, 2, (B,), generator=g)], 1)
        cont = torch.randn(B, 2, generator=g)  # standardised competition distance, customers trend
        y = store_eff[cat[:, 0]] + dow_eff[cat[:, 1]] + month_eff[cat[:, 2]] + 0.6 * cat[:, 3] + 0.3 * cont[:, 0] \
            + 0.1 * torch.randn(B, generator=g)
        y = (y - 0.2) / 0.9
        batches.append(((cat, cont), y))
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
