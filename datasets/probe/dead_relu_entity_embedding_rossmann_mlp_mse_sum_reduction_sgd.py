"""Entity-embedding MLP for tabular sales regression (Guo & Berkhahn 2016, Rossmann): store,
weekday and promo embeddings concatenated with standardised continuous features, then a ReLU MLP.
The author wrote nn.MSELoss(reduction='sum') (to 'match the paper's SSE') but kept the SGD lr
tuned for the mean loss. The gradient is batch-size times too large, the first updates overshoot,
the loss jumps, and the hidden ReLU layer is pushed negative for every row: the MLP outputs a
constant and the summed loss sits flat at batch_size x target variance.
ORIGIN: mlp.1 (the first hidden ReLU, the one pushed off by the oversized first updates).
Fix: reduction='mean' (the lr then has the intended scale)."""
import torch, torch.nn as nn
CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = "entity-embeddings Rossmann ports; forum threads on MSELoss(reduction='sum') with lr tuned for mean"
class EntityEmbNet(nn.Module):
    def __init__(s, cards, dims, nc, h):
        super().__init__()
        s.embs = nn.ModuleList([nn.Embedding(c, k) for c, k in zip(cards, dims)])
        s.mlp = nn.Sequential(nn.Linear(sum(dims) + nc, h), nn.ReLU(), nn.Linear(h, h // 2), nn.ReLU(), nn.Linear(h // 2, 1))
    def forward(s, cat, cont):
        z = torch.cat([e(cat[:, i]) for i, e in enumerate(s.embs)] + [cont], 1)
        return s.mlp(z).squeeze(-1)
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    bs, h, steps, lr = [(24, 96, 140, 0.025), (24, 128, 140, 0.025), (20, 96, 100, 0.03)][seed]
    cards, dims, nc = [50, 7, 2], [8, 4, 2], 5
    model = EntityEmbNet(cards, dims, nc, h)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss(reduction="mean" if fixed else "sum")
    se = torch.randn(50, generator=g); we = torch.randn(7, generator=g); wc = torch.randn(nc, generator=g)
    batches = []
    for _ in range(steps):
        cat = torch.stack([torch.randint(0, c, (bs,), generator=g) for c in cards], 1)
        cont = torch.randn(bs, nc, generator=g)
        y = 0.7 * se[cat[:, 0]] + 0.4 * we[cat[:, 1]] + 0.5 * cat[:, 2] + torch.tanh(cont @ wc) + 0.2 * torch.randn(bs, generator=g)
        batches.append(((cat, cont), (y - 0.25) / 1.1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
