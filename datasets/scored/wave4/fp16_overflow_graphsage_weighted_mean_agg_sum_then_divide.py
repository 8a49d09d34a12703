"""GraphSAGE-style layer with a weighted MEAN aggregator implemented as "sum then divide": a dense
adjacency matmul (A @ H) followed by division by the weighted degree, on an interaction graph where a
few hub nodes have total edge weight in the tens of thousands. Under fp16 autocast the matmul runs in
half precision; a hub's weighted neighbour SUM exceeds 65504 and becomes inf before the division, the next
linear layer turns inf into NaN, and the loss is NaN at the first hub-containing batch. No GradScaler
would help (it is a forward overflow). Fix: run the same model under bfloat16 autocast (8-bit exponent)."""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "fp16_overflow"
ORIGIN = "agg1"
SOURCE = "PyG/DGL reports of NaN with AMP and sum aggregation on high-degree graphs; fp16 max 65504"
class SumAgg(nn.Module):
    def forward(s, A, h): return (A @ h) / A.sum(1, keepdim=True).clamp_min(1.0)
class SAGE(nn.Module):
    def __init__(s, d_in, h, c):
        super().__init__(); s.inp = nn.Linear(d_in, h); s.agg1 = SumAgg(); s.lin1 = nn.Linear(2 * h, h)
        s.agg2 = SumAgg(); s.lin2 = nn.Linear(2 * h, h); s.cls = nn.Linear(h, c)
    def forward(s, x, A):
        h = F.relu(s.inp(x))
        h = F.relu(s.lin1(torch.cat([h, s.agg1(A, h)], -1)))
        h = F.relu(s.lin2(torch.cat([h, s.agg2(A, h)], -1)))
        return s.cls(h)
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    n, d_in, c, h = 600, 8, 3, 24 + 8 * seed
    steps = 60; hub_from = 10 + 10 * seed
    model = SAGE(d_in, h, c)
    with torch.no_grad(): model.inp.bias.fill_(1.0)
    batches = []
    for t in range(steps):
        x = torch.randn(n, d_in, generator=g) + 2.0
        y = (x[:, 0] > 2.0).long() + (x[:, 1] > 2.5).long()
        A = (torch.rand(n, n, generator=g) < 0.01).float()
        if t >= hub_from:
            A[:5] = (torch.rand(5, n, generator=g) < 0.95).float() * torch.randint(60, 120, (5, n), generator=g).float()  # hubs: interaction-count edge weights
        batches.append(((x, A), y))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o.float(), y), batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
