"""Message-passing GNN predicting per-atom charges for a stream of molecular graphs whose size
varies a lot between minibatches (8 to 60 atoms per graph, batches sorted into size buckets as a
data loader with bucketing does). The loss is the squared error SUMMED over atoms and averaged
over graphs, so a bucket of 60-atom molecules reports a loss ~7x larger than a bucket of 8-atom
molecules: the per-step loss jumps up and down by an order of magnitude and the gradient norm
follows, which looks alarming but is only the varying number of summed terms. The underlying
per-atom error decreases steadily. Healthy run."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Per-atom property regression with size-bucketed batching and a per-graph summed loss (common in ML potentials)"


class ChargeGNN(nn.Module):
    def __init__(self, n_types, h=32, n_layers=3):
        super().__init__()
        self.embed = nn.Embedding(n_types, h)
        self.msgs = nn.ModuleList(nn.Sequential(nn.Linear(2 * h, h), nn.SiLU()) for _ in range(n_layers))
        self.out = nn.Sequential(nn.Linear(h, h), nn.SiLU(), nn.Linear(h, 1))

    def forward(self, types, adj, mask):
        h = self.embed(types) * mask[..., None]
        deg = adj.sum(-1, keepdim=True).clamp_min(1.0)
        for msg in self.msgs:
            h = (h + msg(torch.cat([h, adj @ h / deg], -1))) * mask[..., None]
        return self.out(h).squeeze(-1) * mask


def summed_per_graph(pred, target):
    q, mask = target
    return (((pred - q) ** 2) * mask).sum(1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_types = 5
    electroneg = torch.tensor([0.0, 0.8, -0.5, 1.2, -0.9])
    batches = []
    sizes = [8, 16, 30, 45, 60]
    for b in range(40):
        n = sizes[b % len(sizes)]
        bsz = 16
        types = torch.randint(0, n_types, (bsz, n), generator=g)
        adj = torch.zeros(bsz, n, n)
        idx = torch.arange(n - 1)
        adj[:, idx, idx + 1] = 1
        adj = ((adj + (torch.rand(bsz, n, n, generator=g) < 2.0 / n).float()) > 0).float()
        adj = torch.triu(adj, 1); adj = adj + adj.transpose(1, 2)
        mask = torch.ones(bsz, n)
        en = electroneg[types]
        deg = adj.sum(-1).clamp_min(1)
        q = 0.5 * (en - (adj @ en[..., None]).squeeze(-1) / deg)       # charge flows to more electronegative neighbours
        q = q - q.mean(1, keepdim=True)                                   # neutral molecules
        batches.append(((types, adj, mask), (q, mask)))
    model = ChargeGNN(n_types)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=summed_per_graph, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
