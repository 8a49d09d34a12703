"""GraphSAGE (Hamilton et al. 2017) node classifier with a hand-written mean aggregator
h_N = (A @ h) / A.sum(1). Most sampled subgraphs are connected, but a legitimate one contains a
brand-new user with no edges yet (degree 0): 0/0 = NaN in that row, which spreads through the
next layer's aggregation and makes the loss NaN.
ORIGIN: conv1 (the first SAGE layer, whose degree division produces the first NaN).
Fix: divide by deg.clamp_min(1)."""
import torch, torch.nn as nn
CAUSE = "unsafe_op"
ORIGIN = "conv1"
SOURCE = "GraphSAGE mean aggregator ports; isolated nodes giving NaN in A@h/deg"
class SAGE(nn.Module):
    def __init__(s, i, o, guard):
        super().__init__(); s.lin = nn.Linear(2 * i, o); s.guard = guard
    def forward(s, h, A):
        deg = A.sum(-1, keepdim=True)
        agg = (A @ h) / (deg.clamp_min(1) if s.guard else deg)
        return s.lin(torch.cat([h, agg], -1))
class Net(nn.Module):
    def __init__(s, f, h, c, guard):
        super().__init__(); s.conv1 = SAGE(f, h, guard); s.act = nn.ReLU(); s.conv2 = SAGE(h, c, guard)
    def forward(s, x, A): return s.conv2(s.act(s.conv1(x, A)), A).reshape(-1, s.conv2.lin.out_features)
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    N, f, h, B, steps, lr, bad = [(20, 8, 32, 16, 60, 1e-2, 30), (30, 12, 64, 8, 80, 5e-3, 55), (15, 6, 24, 24, 50, 2e-2, 10)][seed]
    c = 3; model = Net(f, h, c, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    W = torch.randn(f, c, generator=g)
    batches = []
    for i in range(steps):
        x = torch.randn(B, N, f, generator=g)
        A = (torch.rand(B, N, N, generator=g) < 0.25).float(); A = ((A + A.transpose(1, 2)) > 0).float() * (1 - torch.eye(N))
        A[:, :, 0] = 1; A[:, 0, :] = 1; A[:, 0, 0] = 0
        if i == bad: A[0, N - 1, :] = 0; A[0, :, N - 1] = 0
        deg = A.sum(-1, keepdim=True).clamp_min(1)
        y = ((x + (A @ x) / deg) @ W).argmax(-1).reshape(-1)
        batches.append(((x, A), y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
