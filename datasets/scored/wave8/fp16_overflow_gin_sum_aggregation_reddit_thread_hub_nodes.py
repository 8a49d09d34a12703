"""GIN (sum aggregation, 5 layers, mean-pooled readout of every layer concatenated as in Xu et
al., LayerNorm before the classifier) classifies discussion threads into Q&A vs debate threads,
REDDIT-BINARY style: nodes are users, edges are replies, there are no node features (constant
input), and Q&A threads have two hub users (the original poster and an expert) connected to
almost all ~300-400 participants. The run uses fp16 autocast on a dense adjacency (adj @ h runs
in half) with no GradScaler and no clamp. Sum aggregation is exactly what GIN prescribes, but the
hub's summed neighbour features grow by roughly the hub degree every two layers, so in the last GIN
layer (layers.4) the half-precision aggregation passes 65504 and becomes inf; readout and
LayerNorm turn it into NaN and the loss is NaN from the first big Q&A thread. The fix keeps
everything identical but autocasts to bfloat16 (same 16-bit storage, fp32 exponent range)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "layers.4"
SOURCE = ("GIN on REDDIT-BINARY / social graphs with hub nodes (Xu et al. 2019, 'How Powerful are "
          "GNNs'); fp16 autocast overflow of sum aggregation reported for large-degree graphs in "
          "PyG/DGL mixed-precision issues; recommended fix: bf16 or fp32 aggregation.")

NMAX, HID, LAYERS = 430, 32, 5


class GINLayer(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(fin, fout), nn.ReLU(), nn.Linear(fout, fout), nn.ReLU())

    def forward(self, h, adj):
        agg = torch.matmul(adj, h)  # sum over neighbours
        return self.mlp((1 + self.eps) * h + agg)


class GIN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([GINLayer(1 if i == 0 else HID, HID) for i in range(LAYERS)])
        self.norm = nn.LayerNorm(1 + LAYERS * HID)
        self.head = nn.Linear(1 + LAYERS * HID, 2)

    def forward(self, x, adj, mask):
        n = mask.sum(1, keepdim=True)
        reps = [x.sum(1) / n]
        h = x
        for layer in self.layers:
            h = layer(h, adj) * mask.unsqueeze(-1)
            reps.append(h.sum(1) / n)  # mean readout of every layer (jumping knowledge)
        return self.head(self.norm(torch.cat(reps, -1)))


def make_thread(g, qa):
    n = int(torch.randint(330, NMAX, (1,), generator=g))
    adj = torch.zeros(NMAX, NMAX)
    if qa:  # the original poster and one expert reply to most participants
        adj[0, 1] = adj[1, 0] = 1.0
        for i in range(2, n):
            if torch.rand(1, generator=g) < 0.6:
                adj[1, i] = adj[i, 1] = 1.0  # OP thanks / follows up
            if torch.rand(1, generator=g) < 0.97:
                adj[0, i] = adj[i, 0] = 1.0  # expert answers
            else:
                j = int(torch.randint(1, n, (1,), generator=g))
                if j != i:
                    adj[i, j] = adj[j, i] = 1.0
    else:  # debate: reply chains among many users
        for i in range(1, n):
            for _ in range(2):
                j = int(torch.randint(max(0, i - 6), i, (1,), generator=g))
                adj[i, j] = adj[j, i] = 1.0
    mask = torch.zeros(NMAX)
    mask[:n] = 1.0
    x = mask.unsqueeze(-1).clone()
    return x, adj, mask


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GIN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, B = 40, 4
    pool = [make_thread(g, qa=(i % 2 == 0)) + (i % 2 == 0,) for i in range(48)]
    batches = []
    for s in range(steps):
        idx = torch.randint(0, len(pool), (B,), generator=g).tolist()
        x = torch.stack([pool[i][0] for i in idx])
        adj = torch.stack([pool[i][1] for i in idx])
        mask = torch.stack([pool[i][2] for i in idx])
        y = torch.tensor([int(pool[i][3]) for i in idx])
        batches.append(((x, adj, mask), y))

    def loss_fn(out, y):
        return F.cross_entropy(out.float(), y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
