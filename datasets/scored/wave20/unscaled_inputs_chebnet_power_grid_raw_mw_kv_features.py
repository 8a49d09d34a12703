"""ChebNet (Defferrard et al. 2016, K-order Chebyshev spectral graph conv) for
power-grid voltage prediction: per-bus features are active/reactive injections
in MW/MVAr (hundreds), nominal voltage in kV (138-345) and a bus-type flag;
target is the bus voltage magnitude in volts*1e-3 (kV, ~100-350). MSE, SGD.

Mechanism: neither features nor targets are standardised. The first ChebConv
receives inputs of magnitude ~1e2, the targets are ~1e2, the initial MSE is
~1e4-1e5 and the gradients are just as huge; momentum SGD at an otherwise
normal lr overshoots on the first step and the loss runs off to inf/NaN.
ORIGIN is the first Chebyshev layer (conv1), the first layer that receives the
unscaled inputs.
Fix: standardise features and targets with training statistics.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "conv1"
SOURCE = "GNN power-flow / state-estimation tutorials on IEEE test cases fed raw pandapower bus tables (MW, kV); 'loss is nan from the first epoch' reports"


class ChebConv(nn.Module):
    def __init__(self, i, o, K):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(i, o, bias=(k == 0)) for k in range(K)])

    def forward(self, x, L):
        tx0, out = x, self.lins[0](x)
        if len(self.lins) > 1:
            tx1 = L @ x
            out = out + self.lins[1](tx1)
            for k in range(2, len(self.lins)):
                tx2 = 2 * (L @ tx1) - tx0
                out = out + self.lins[k](tx2)
                tx0, tx1 = tx1, tx2
        return out


class ChebNet(nn.Module):
    def __init__(self, d, h, K, L):
        super().__init__()
        self.register_buffer("L", L)
        self.conv1 = ChebConv(d, h, K)
        self.act = nn.ReLU()
        self.conv2 = ChebConv(h, 1, K)

    def forward(self, x):
        return self.conv2(self.act(self.conv1(x, self.L)), self.L).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=118, h=32, K=3, lr=0.01, steps=60), dict(n=57, h=16, K=2, lr=0.005, steps=80),
           dict(n=150, h=64, K=4, lr=0.01, steps=50)][seed % 3]
    g = torch.Generator().manual_seed(seed)
    n = cfg["n"]
    a = torch.zeros(n, n); idx = torch.arange(n)
    a[idx, (idx + 1) % n] = 1
    e = torch.randint(0, n, (n // 3, 2), generator=g); a[e[:, 0], e[:, 1]] = 1
    a = ((a + a.T) > 0).float(); a.fill_diagonal_(0)
    dinv = a.sum(1).clamp_min(1).rsqrt()
    L = -dinv[:, None] * a * dinv[None, :]  # scaled Laplacian (lambda_max ~ 2): L - I
    kv = torch.tensor([138.0, 230.0, 345.0])[torch.randint(0, 3, (n,), generator=g)]
    xs, ys = [], []
    for _ in range(cfg["steps"]):
        p = 100 * torch.randn(n, generator=g)
        q = 40 * torch.randn(n, generator=g)
        typ = (torch.rand(n, generator=g) < 0.2).float()
        x = torch.stack([p, q, kv, typ], 1)
        v = kv * (1 + 0.0003 * (torch.eye(n) - 0.5 * (L + torch.eye(n)) * 0 + 0.5 * (-L)) @ p / 10 - 0.02 * typ)
        xs.append(x); ys.append(v)
    if fixed:
        X = torch.cat(xs); Y = torch.cat(ys)
        mx, sx, my, sy = X.mean(0), X.std(0) + 1e-6, Y.mean(), Y.std()
        xs = [(x - mx) / sx for x in xs]; ys = [(y - my) / sy for y in ys]
    torch.manual_seed(seed)
    model = ChebNet(4, cfg["h"], cfg["K"], L)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=list(zip(xs, ys)), steps=cfg["steps"])
