"""Link prediction on a community-structured social graph with a two-layer GraphSAGE encoder
(mean aggregation, dense row-normalised adjacency) and a dot-product edge decoder. Every step
draws a different number of held-out positive edges (100..200) and the same number of freshly
resampled random negatives, and the BCE is SUMMED over the sampled edges (reduction="sum", as
in some PyG examples that later divide by the epoch's edge count). The per-step loss therefore
jumps up and down by a factor of up to 2 with the batch size and is noisy from the resampled
negatives, and the gradient norm scales with the number of edges, which looks alarming but is
normal: per edge the model learns steadily and the summed loss ends far below its start (Adam
is insensitive to the gradient scale)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("GraphSAGE (Hamilton et al. 2017) link prediction with negative sampling as in the "
          "PyG link_pred examples; summed BCE over a varying number of sampled edges.")

N, F_IN, HID, COMM = 200, 16, 32, 5


class SAGELayer(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.self_lin = nn.Linear(fin, fout)
        self.neigh_lin = nn.Linear(fin, fout, bias=False)

    def forward(self, x, a_mean):
        return self.self_lin(x) + self.neigh_lin(a_mean @ x)


class SAGELinkPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = SAGELayer(F_IN, HID)
        self.conv2 = SAGELayer(HID, HID)

    def forward(self, x, a_mean, src, dst):
        h = F.relu(self.conv1(x, a_mean))
        h = self.conv2(h, a_mean)
        return (h[src] * h[dst]).sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    comm = torch.randint(0, COMM, (N,), generator=g)
    p = torch.where(comm[:, None] == comm[None, :], torch.tensor(0.12), torch.tensor(0.005))
    adj = torch.triu((torch.rand(N, N, generator=g) < p).float(), 1)
    adj = adj + adj.t()
    edges = adj.nonzero()
    edges = edges[edges[:, 0] < edges[:, 1]]
    perm = torch.randperm(len(edges), generator=g)
    held = edges[perm[: len(edges) // 4]]  # supervision edges removed from message passing
    train_adj = adj.clone()
    train_adj[held[:, 0], held[:, 1]] = 0
    train_adj[held[:, 1], held[:, 0]] = 0
    deg = train_adj.sum(1, keepdim=True).clamp_min(1)
    a_mean = train_adj / deg
    x = F.one_hot(comm, COMM).float() @ torch.randn(COMM, F_IN, generator=g) * 1.5
    x = x + torch.randn(N, F_IN, generator=g)

    model = SAGELinkPredictor()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    steps = 200
    batches = []
    for _ in range(steps):
        m = int(torch.randint(100, 201, (1,), generator=g))
        pos = held[torch.randint(0, len(held), (m,), generator=g)]
        neg = torch.randint(0, N, (m, 2), generator=g)
        src = torch.cat([pos[:, 0], neg[:, 0]])
        dst = torch.cat([pos[:, 1], neg[:, 1]])
        y = torch.cat([torch.ones(m), torch.zeros(m)])
        batches.append(((x, a_mean, src, dst), y))

    def loss_fn(out, y):
        return F.binary_cross_entropy_with_logits(out, y, reduction="sum")

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
