"""Credit/fraud risk scorer from a customer's card-spending history: the last 150-300 merchant
category/merchant ids are embedded with nn.EmbeddingBag and passed through a tanh hidden
layer ("spend profile") into a logistic head trained with BCEWithLogitsLoss.

Mechanism: the embeddings are initialised with nn.init.uniform_ (meant as "small uniform",
but the default range is U(0, 1), all positive) and the bag uses mode='sum' over 150-300
transactions.  Every bag coordinate is therefore ~L/2 = 75-150, with a common positive
component that dwarfs the per-customer differences: the hidden Linear + nn.Tanh gets
pre-activations of tens for every sample, the tanh units sit at the same +-1 for every
customer, their derivative is ~1e-20, no gradient reaches the embeddings (where all the
signal is), and the loss never improves.

ORIGIN: act, the nn.Tanh that saturates.
Fix: mode='mean' (the bag vector is an average, O(1)).
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "act"
SOURCE = "Merchant-sequence spend embeddings for risk scoring; nn.EmbeddingBag(mode='sum') with all-positive U(0,1) init feeding tanh layers"


class BagScorer(nn.Module):
    def __init__(self, n_merchants, dim, hidden, mode):
        super().__init__()
        self.bag = nn.EmbeddingBag(n_merchants, dim, mode=mode)
        nn.init.uniform_(self.bag.weight)  # "small uniform" init -> U(0, 1)
        self.fc = nn.Linear(dim, hidden)
        self.act = nn.Tanh()
        self.out = nn.Linear(hidden, 1)

    def forward(self, ids):
        return self.out(self.act(self.fc(self.bag(ids)))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(dim=16, h=32, L=200, bs=64, lr=0.5), dict(dim=16, h=24, L=250, bs=80, lr=0.3), dict(dim=12, h=24, L=150, bs=96, lr=0.5)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1500 + seed)
    M = 200
    model = BagScorer(M, cfg["dim"], cfg["h"], "mean" if fixed else "sum")
    risky = torch.zeros(M)
    risky[:20] = 1.0  # gambling / cash-advance / crypto merchant ids
    steps = 80
    batches = []
    for _ in range(steps):
        B, L = cfg["bs"], cfg["L"]
        y = (torch.rand(B, generator=g) < 0.4).float()
        p_risky = 0.05 + 0.25 * y
        is_r = torch.rand(B, L, generator=g) < p_risky[:, None]
        ids = torch.where(is_r, torch.randint(0, 20, (B, L), generator=g), torch.randint(20, M, (B, L), generator=g))
        batches.append((ids, y))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
