"""Dense multi-head graph attention network (GAT) for node classification on a batch of
stochastic-block-model graphs, implemented the common dense way: attention logits for all node
pairs, non-edges set to -inf with masked_fill, softmax over neighbours. The attention tensors
are full of -inf values and exactly-zero probabilities, and each graph is padded to a fixed
size with padded nodes ignored by the loss, which looks alarming in activation dumps. It is
fine: self-loops are added, so every row has at least one finite logit and softmax never sees
an all -inf row (no 0/0), padded nodes only attend to themselves, and the masked
cross-entropy trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("GAT (Velickovic et al. 2018) dense implementation with -inf adjacency masking (as in "
          "the reference pyGAT code: torch.where(adj > 0, e, -9e15) / masked_fill(-inf)); "
          "self-loops guarantee a finite entry per row")


class GATLayer(nn.Module):
    def __init__(self, d_in, d_out, heads, concat=True):
        super().__init__()
        self.heads, self.d_out, self.concat = heads, d_out, concat
        self.W = nn.Linear(d_in, heads * d_out, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, d_out) * 0.1)
        self.a_dst = nn.Parameter(torch.randn(heads, d_out) * 0.1)

    def forward(self, h, adj):
        B, N, _ = h.shape
        Wh = self.W(h).view(B, N, self.heads, self.d_out)
        e = (Wh * self.a_dst).sum(-1).unsqueeze(2) + (Wh * self.a_src).sum(-1).unsqueeze(1)
        e = F.leaky_relu(e, 0.2).permute(0, 3, 1, 2)            # B, H, N, N
        e = e.masked_fill(adj.unsqueeze(1) == 0, float("-inf"))
        att = torch.softmax(e, dim=-1)
        out = torch.einsum("bhij,bjhd->bihd", att, Wh)
        return out.reshape(B, N, -1) if self.concat else out.mean(2)


class GAT(nn.Module):
    def __init__(self, d_in, hidden, heads, n_cls):
        super().__init__()
        self.gat1 = GATLayer(d_in, hidden, heads)
        self.gat2 = GATLayer(hidden * heads, n_cls, 1, concat=False)

    def forward(self, x, adj):
        return self.gat2(F.elu(self.gat1(x, adj)), adj)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31337 + seed)
    n_max, n_cls, d_in = 24, 3, 12
    hidden = [8, 12, 16][seed % 3]
    heads = [4, 2, 3][seed % 3]
    batch = [8, 16, 12][seed % 3]
    steps = [120, 100, 140][seed % 3]
    lr = [5e-3, 1e-2, 5e-3][seed % 3]
    protos = torch.randn(n_cls, d_in, generator=g) * 0.4

    batches = []
    for _ in range(steps):
        X = torch.zeros(batch, n_max, d_in)
        A = torch.zeros(batch, n_max, n_max)
        Y = torch.full((batch, n_max), -100, dtype=torch.long)
        for b in range(batch):
            n = int(torch.randint(12, n_max + 1, (1,), generator=g))
            lab = torch.randint(0, n_cls, (n,), generator=g)
            same = lab[:, None] == lab[None, :]
            P = torch.where(same, torch.tensor(0.3), torch.tensor(0.03))
            E = torch.triu((torch.rand(n, n, generator=g) < P).float(), 1)
            A[b, :n, :n] = E + E.T
            X[b, :n] = protos[lab] + torch.randn(n, d_in, generator=g)
            Y[b, :n] = lab
        A = A + torch.eye(n_max)                                 # self-loops (also for padding)
        batches.append(((X, A), Y))

    model = GAT(d_in, hidden, heads, n_cls)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)

    def loss_fn(out, y):
        return F.cross_entropy(out.reshape(-1, n_cls), y.reshape(-1), ignore_index=-100)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
