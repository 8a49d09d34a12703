"""GRU4Rec-style session recommender (item embedding -> GRU -> full softmax over the catalogue) trained
with Adagrad.  The learning rate (3-4) was copied from a sparse hashed-feature CTR baseline where
per-coordinate Adagrad tolerates very large steps; for the dense GRU weights the very first Adagrad steps move every
parameter by ~lr (the first accumulator equals the squared gradient), so the update/weight ratio is
far above 1 instead of ~1e-3.  The recurrent weights are thrown into a regime where hidden states are
saturated noise and the next-item loss stays at (or above) its starting value.  Fixed: lr=0.05."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "GRU4Rec (Hidasi et al.) session-based recommendation; Adagrad lr copied from sparse CTR models"


class GRU4Rec(nn.Module):
    def __init__(self, n_items, emb, hidden):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_items)

    def forward(self, sessions):
        h, _ = self.gru(self.item_emb(sessions))
        return self.out(h)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    emb, hidden, bs, bad_lr, steps, seqlen = [(32, 48, 32, 3.0, 120, 12), (24, 32, 48, 4.0, 100, 10), (32, 64, 24, 3.0, 150, 14)][seed % 3]
    n_items = 120
    nxt = torch.randint(0, n_items, (n_items, 3), generator=g)  # each item has 3 likely successors
    model = GRU4Rec(n_items, emb, hidden)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05 if fixed else bad_lr)
    batches = []
    for _ in range(steps):
        s = torch.empty(bs, seqlen + 1, dtype=torch.long)
        s[:, 0] = torch.randint(0, n_items, (bs,), generator=g)
        for t in range(seqlen):
            pick = torch.randint(0, 3, (bs,), generator=g)
            rnd = torch.randint(0, n_items, (bs,), generator=g)
            s[:, t + 1] = torch.where(torch.rand(bs, generator=g) < 0.85, nxt[s[:, t], pick], rnd)
        batches.append((s[:, :-1], s[:, 1:]))
    loss_fn = lambda o, y: F.cross_entropy(o.reshape(-1, o.shape[-1]), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
