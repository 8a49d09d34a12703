"""GraphCast-style encode-process-decode GNN on a mesh, processor MLP weights written by hand as torch.randn.

Mechanism: the user re-implements the interaction-network processor with raw nn.Parameter(torch.randn(d_in, d_out))
(no 1/sqrt(fan_in) scaling, no LayerNorm). Each processor layer multiplies the node-latent scale by
~sqrt(fan_in) (~8-11 for width 64-128 concatenated features), so after a few message-passing
rounds the latents are ~1e4-1e6 from step 0, the MSE is astronomically large and the first SGD
updates overflow: loss becomes inf/NaN within a handful of steps.

ORIGIN: `processor.0` (first badly scaled processor layer; growth starts there, the encoder is nn.Linear with default init).
Fix: scale the hand-written weights by 1/sqrt(fan_in) (kaiming-style), same optimiser and lr.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "processor.0"
SOURCE = "GraphCast (Lam et al. 2023) encode-process-decode mesh GNN; hand-written GNN layers with torch.randn weights and no fan-in scaling"


class MeshInteraction(nn.Module):
    def __init__(self, d, fixed):
        super().__init__()
        scale = (1.0 / (2 * d)) ** 0.5 if fixed else 1.0
        self.w_edge = nn.Parameter(torch.randn(2 * d, d) * scale)
        self.w_node = nn.Parameter(torch.randn(2 * d, d) * (scale if fixed else 1.0))
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, h, src, dst, n):
        m = torch.relu(torch.cat([h[:, src], h[:, dst]], -1) @ self.w_edge)
        agg = torch.zeros(h.shape[0], n, h.shape[2]).index_add(1, dst, m) / 6.0
        return h + torch.relu(torch.cat([h, agg], -1) @ self.w_node + self.b)


class MeshGNN(nn.Module):
    def __init__(self, cin, d, layers, fixed, src, dst, n):
        super().__init__()
        self.src, self.dst, self.n = src, dst, n
        self.encoder = nn.Linear(cin, d)
        self.processor = nn.ModuleList([MeshInteraction(d, fixed) for _ in range(layers)])
        self.decoder = nn.Linear(d, cin)

    def forward(self, x):
        h = torch.relu(self.encoder(x))
        for layer in self.processor:
            h = layer(h, self.src, self.dst, self.n)
        return x + self.decoder(h)  # residual next-state prediction


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 24][seed % 3]
    layers = [4, 3, 5][seed % 3]
    n = [80, 60, 100][seed % 3]
    bs = [4, 6, 4][seed % 3]
    steps = [60, 50, 70][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    # random points on the sphere, 6-nearest-neighbour mesh edges (stand-in for the icosahedral mesh)
    p = torch.randn(n, 3, generator=g); p = p / p.norm(dim=1, keepdim=True)
    nbr = torch.cdist(p, p).topk(7, largest=False).indices[:, 1:]
    dst = torch.arange(n).repeat_interleave(6); src = nbr.reshape(-1)
    lap = torch.zeros(n, n); lap[dst, src] = 1.0 / 6
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n, 5, generator=g)
        for _ in range(3):
            x = lap @ x * 0.7 + 0.3 * x
        x = x / x.std()
        y = x + 0.3 * (lap @ x - x)  # diffusion-like one-step evolution
        batches.append((x, y))
    model = MeshGNN(5, d, layers, fixed, src, dst, n)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
