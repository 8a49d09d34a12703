"""HAN (Wang et al. 2019, heterogeneous graph attention network) on an
academic graph (authors linked through APA / APCPA meta-paths): per-meta-path
GAT-style node-level attention, semantic-level attention over meta-paths, linear
classifier, cross-entropy.

Mechanism: the HAN recipe uses Adam(lr=5e-3); the user switched to SGD with
momentum and kept a "bigger is faster" lr of 2-4 (tuned for a linear probe on
the same features). The updates are orders of magnitude larger than the weights
(update/weight ratio >> 1e-3): the attention logits and class logits overshoot,
grow each step and the loss becomes inf/NaN within a few dozen steps.
ORIGIN is None: a too-high lr is global, no single module starts it.
Fix: lr 0.05 with the same optimizer.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "HAN (Jhy1993/HAN, DGL han example) retrained with SGD and a large lr; generic 'loss goes to nan with SGD lr 1+' reports"


class NodeAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.lin = nn.Linear(d, h, bias=False)
        self.att_src = nn.Parameter(torch.randn(h) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(h) * 0.1)

    def forward(self, x, mask):
        z = self.lin(x)
        e = F.leaky_relu((z @ self.att_dst)[:, None] + (z @ self.att_src)[None, :], 0.2)
        e = e.masked_fill(~mask, float("-inf"))
        return F.elu(torch.softmax(e, 1) @ z)


class HAN(nn.Module):
    def __init__(self, d, h, c, P):
        super().__init__()
        self.node_att = nn.ModuleList([NodeAttention(d, h) for _ in range(P)])
        self.sem_proj = nn.Linear(h, h)
        self.sem_q = nn.Linear(h, 1, bias=False)
        self.cls = nn.Linear(h, c)

    def forward(self, x, masks):
        zs = torch.stack([m(x, masks[i]) for i, m in enumerate(self.node_att)], 1)  # (N, P, h)
        w = self.sem_q(torch.tanh(self.sem_proj(zs))).mean(0)  # (P, 1)
        beta = torch.softmax(w, 0)
        return self.cls((beta[None] * zs).sum(1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=150, d=64, h=32, P=2, lr=3.0, steps=60), dict(n=200, d=48, h=16, P=3, lr=2.0, steps=80),
           dict(n=120, d=32, h=64, P=2, lr=4.0, steps=50)][seed % 3]
    lr = 0.05 if fixed else cfg["lr"]
    g = torch.Generator().manual_seed(seed)
    n, c = cfg["n"], 3
    y = torch.randint(0, c, (n,), generator=g)
    masks = []
    for pth in range(cfg["P"]):
        pr = torch.where(y[:, None] == y[None, :], 0.15 - 0.04 * pth, 0.02)
        m = torch.rand(n, n, generator=g) < pr
        m = m | m.T | torch.eye(n, dtype=torch.bool)
        masks.append(m)
    masks = torch.stack(masks)
    x = torch.randn(c, cfg["d"], generator=g)[y] * 0.5 + torch.randn(n, cfg["d"], generator=g)
    torch.manual_seed(seed)
    model = HAN(cfg["d"], cfg["h"], c, cfg["P"])
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [((x, masks), y) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=cfg["steps"])
