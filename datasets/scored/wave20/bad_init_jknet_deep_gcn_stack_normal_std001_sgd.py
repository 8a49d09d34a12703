"""JK-Net (jumping knowledge, concat) node classifier on a citation-like graph,
with every GCN layer initialised with nn.init.normal_(std=0.01) (the old Caffe/TF
recipe copied from a tutorial) and trained with plain SGD (no momentum).

Mechanism: with std=0.01 and fan-in 32-64 each GCN layer multiplies the activation
scale by ~0.01*sqrt(fan_in/2) ~ 0.05, so the hidden representations shrink
geometrically with depth from step 0; the concatenated JK representation and the
classifier weights are also ~0, the logits are ~0 and the SGD gradients reaching
every layer are vanishingly small. Cross-entropy stays at log(C): a stall.
ORIGIN is the first GCN layer (convs.0.lin): its tiny weights are where the signal
first collapses, every later layer only compounds it.
Fix: default kaiming-uniform / xavier init (the init_ function is not applied).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "convs.0.lin"
SOURCE = "JK-Net (Xu et al. 2018) node classification; user ports a TF init normal(0, 0.01) into every layer (common forum report: 'GCN loss stuck at ln(C) with SGD')"


def make_graph(g, n, c, d):
    y = torch.randint(0, c, (n,), generator=g)
    p = torch.where(y[:, None] == y[None, :], 0.12, 0.01)
    a = (torch.rand(n, n, generator=g) < p).float()
    a = torch.triu(a, 1); a = a + a.T + torch.eye(n)
    dinv = a.sum(1).rsqrt()
    a_hat = dinv[:, None] * a * dinv[None, :]
    centers = torch.randn(c, d, generator=g)
    x = centers[y] * 0.6 + torch.randn(n, d, generator=g)
    return x, a_hat, y


class GCNLayer(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = nn.Linear(i, o)
        self.act = nn.ReLU()

    def forward(self, x, a):
        return self.act(a @ self.lin(x))


class JKNet(nn.Module):
    def __init__(self, d, h, c, layers):
        super().__init__()
        self.convs = nn.ModuleList([GCNLayer(d if i == 0 else h, h) for i in range(layers)])
        self.out = nn.Linear(h * layers, c)

    def forward(self, x, a):
        hs = []
        for conv in self.convs:
            x = conv(x, a)
            hs.append(x)
        return self.out(torch.cat(hs, dim=1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=200, h=32, L=6, lr=0.05, steps=80), dict(n=240, h=48, L=7, lr=0.03, steps=100),
           dict(n=180, h=64, L=6, lr=0.04, steps=70)][seed % 3]
    g = torch.Generator().manual_seed(seed)
    x, a, y = make_graph(g, cfg["n"], 5, 32)
    torch.manual_seed(seed)
    model = JKNet(32, cfg["h"], 5, cfg["L"])
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    batches = [((x, a), y) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=cfg["steps"])
