"""Neural algorithmic reasoning: an MPNN processor (Velickovic et al. 2020, "Neural execution
of graph algorithms") unrolled for T message-passing steps with shared weights to imitate
Bellman-Ford shortest-path distances from a source node.

Mechanism: the user initialised every nn.Linear with ``nn.init.normal_(w, 0.0, 1.0)`` (a
TF1 ``random_normal`` habit). The message function sees a 2*H+1-wide concatenation, so each
message layer multiplies the activation scale by roughly sqrt(fan_in) ~ 8-11, and the
processor is applied T times with max aggregation (which never shrinks anything). The node
states grow geometrically with every unrolled step from step 0; the predicted distances are
~1e10-1e20, the MSE is astronomically large and the first Adam steps cannot repair it before
the loss/gradients overflow to inf/NaN.

ORIGIN: ``processor.message`` - the first layer whose large weights amplify the state, and it
is re-applied at every unrolled step (the encoder alone only maps 2 features).

Fix: keep PyTorch's default (kaiming-uniform, a=sqrt(5)) init i.e. do not re-initialise
with std 1.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "processor.message"
SOURCE = ("Neural execution of graph algorithms (Velickovic et al., ICLR 2020) MPNN processor; "
          "common forum reports of re-implementations initialising Linear weights with "
          "normal(0, 1) and the unrolled processor exploding")


class Processor(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.message = nn.Linear(2 * h + 1, h)
        self.update = nn.Linear(2 * h, h)

    def forward(self, z, w, adj):
        # z: B,N,H ; w: B,N,N edge weights ; adj: B,N,N bool (incl. self loops)
        B, N, H = z.shape
        zi = z.unsqueeze(2).expand(B, N, N, H)
        zj = z.unsqueeze(1).expand(B, N, N, H)
        m = torch.relu(self.message(torch.cat([zi, zj, w.unsqueeze(-1)], -1)))
        m = m.masked_fill(~adj.unsqueeze(-1), -1e9)
        agg = m.max(dim=2).values  # max aggregation, as in the paper
        return torch.relu(self.update(torch.cat([z, agg], -1)))


class NeuralExecutor(nn.Module):
    def __init__(self, h, steps):
        super().__init__()
        self.steps = steps
        self.encoder = nn.Linear(2, h)
        self.processor = Processor(h)
        self.decoder = nn.Linear(2 * h, 1)

    def forward(self, x, w, adj):
        z0 = self.encoder(x)
        z = z0
        for _ in range(self.steps):
            z = self.processor(z, w, adj)
        return self.decoder(torch.cat([z, z0], -1)).squeeze(-1)


def _graphs(g, B, N):
    w = torch.rand(B, N, N, generator=g) * 0.8 + 0.2
    w = (w + w.transpose(1, 2)) / 2
    adj = torch.rand(B, N, N, generator=g) < 0.3
    ring = torch.zeros(N, N, dtype=torch.bool)
    idx = torch.arange(N)
    ring[idx, (idx + 1) % N] = True
    adj = adj | ring | ring.T | torch.eye(N, dtype=torch.bool)
    adj = adj | adj.transpose(1, 2)
    w = torch.where(adj, w, torch.zeros_like(w))
    w = w * (~torch.eye(N, dtype=torch.bool)).float()
    src = torch.randint(0, N, (B,), generator=g)
    INF = 1e9
    cost = torch.where(adj, w, torch.full_like(w, INF))
    d = torch.full((B, N), INF)
    d[torch.arange(B), src] = 0.0
    for _ in range(N):  # Bellman-Ford relaxation
        d = torch.minimum(d, (d.unsqueeze(2) + cost).min(dim=1).values)
    x = torch.zeros(B, N, 2)
    x[torch.arange(B), src, 0] = 1.0
    x[:, :, 1] = 1.0
    return (x, w, adj), d


def build(seed: int, fixed: bool = False) -> dict:
    # T = N unrolled steps: Bellman-Ford needs at most N-1 relaxations
    cfg = [dict(h=32, T=14, N=14, B=24, lr=1e-3, steps=100),
           dict(h=48, T=12, N=12, B=24, lr=2e-3, steps=90),
           dict(h=64, T=11, N=11, B=16, lr=1e-3, steps=110)][seed % 3]
    torch.manual_seed(seed)
    model = NeuralExecutor(cfg["h"], cfg["T"])
    if not fixed:
        for mod in model.modules():
            if isinstance(mod, nn.Linear):
                nn.init.normal_(mod.weight, 0.0, 1.0)
                nn.init.zeros_(mod.bias)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(1000 + seed)
    batches = [_graphs(g, cfg["B"], cfg["N"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
