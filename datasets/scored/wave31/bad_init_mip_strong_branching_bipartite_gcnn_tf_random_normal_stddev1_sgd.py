"""Imitation of strong branching for MILP (Gasse et al. 2019 bipartite GCNN), written by hand.

Mechanism: every nn.Linear in the constraint/variable bipartite graph network is re-initialised with
``nn.init.normal_(w, 0.0, 1.0)`` / zero bias, a literal port of a TF1 ``tf.random_normal`` default
(stddev=1.0) initialiser. With fan-ins of 32-64 and sum aggregation over the constraint matrix, each
linear layer multiplies the activation scale by roughly sqrt(fan_in) and each half-convolution
adds the degree on top, so the variable logits are already ~1e5-1e8 at step 0. The cross-entropy
over candidate variables is then huge, its gradients are huge, and the first SGD steps throw the
weights to values whose forward pass overflows: the loss becomes inf/NaN within a few steps.

ORIGIN: ``var_embed.0`` -- the first layer the input meets in forward order; it is the first place
where the activation scale is already ~sqrt(fan_in) too large, and every later layer compounds it.
The explosion is a property of every layer's init, so the first one is where it starts.

Fix: keep PyTorch's default (Kaiming-uniform) scale, here applied as xavier_uniform_ on every
Linear; the data, model, optimiser, learning rate and steps are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "var_embed.0"
SOURCE = ("Gasse et al., 'Exact Combinatorial Optimization with Graph Convolutional Neural Networks' "
          "(NeurIPS 2019) bipartite GCNN; known pattern of porting tf.random_normal (stddev=1.0 default) "
          "initialisers to PyTorch nn.init.normal_ without the 1/sqrt(fan_in) scale")


class BipartiteConv(nn.Module):
    """Half-convolution: messages from `src` nodes into `dst` nodes through the coefficient matrix."""

    def __init__(self, h):
        super().__init__()
        self.msg = nn.Linear(2 * h + 1, h)
        self.out = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU(), nn.Linear(h, h))

    def forward(self, dst, src, A):
        # A: (B, n_dst, n_src) constraint coefficients (0 where no edge)
        B, nd, h = dst.shape
        ns = src.shape[1]
        d = dst.unsqueeze(2).expand(B, nd, ns, h)
        s = src.unsqueeze(1).expand(B, nd, ns, h)
        m = F.relu(self.msg(torch.cat([d, s, A.unsqueeze(-1)], -1)))
        agg = (m * (A != 0).unsqueeze(-1).float()).sum(2)           # sum aggregation (Gasse)
        return self.out(torch.cat([dst, agg], -1))


class BranchingGCNN(nn.Module):
    def __init__(self, fv, fc, h, rounds):
        super().__init__()
        self.var_embed = nn.Sequential(nn.Linear(fv, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.cons_embed = nn.Sequential(nn.Linear(fc, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.v2c = nn.ModuleList([BipartiteConv(h) for _ in range(rounds)])
        self.c2v = nn.ModuleList([BipartiteConv(h) for _ in range(rounds)])
        self.head = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1, bias=False))

    def forward(self, xv, xc, A):
        v = self.var_embed(xv)
        c = self.cons_embed(xc)
        for k in range(len(self.v2c)):
            c = self.v2c[k](c, v, A)                     # A: (B, m, n)
            v = self.c2v[k](v, c, A.transpose(1, 2))     # (B, n, m)
        return self.head(v).squeeze(-1)                  # (B, n) one logit per candidate variable


def _instances(g, bs, n, m):
    mask = (torch.rand(bs, m, n, generator=g) < 0.15).float()
    A = torch.randn(bs, m, n, generator=g).round().clamp(-3, 3) * mask
    A = A + mask * (A == 0).float()                       # nonzero coefficient on every edge
    lp = torch.rand(bs, n, generator=g)                   # LP relaxation value in [0, 1]
    frac = lp * (1 - lp)
    obj = torch.randn(bs, n, generator=g)
    redc = torch.randn(bs, n, generator=g) * 0.5
    deg = mask.sum(1)
    xv = torch.stack([obj, lp, frac, redc, deg / 5.0, (lp > 0.5).float()], -1)
    slack = torch.rand(bs, m, generator=g)
    dual = torch.randn(bs, m, generator=g) * 0.5
    rhs = torch.randn(bs, m, generator=g)
    xc = torch.stack([slack, dual, rhs, mask.sum(2) / 5.0], -1)
    # strong-branching proxy: fractional, high-degree variables in tight rows with large |objective|
    tight = (slack < 0.2).float()
    score = 4 * frac + 0.6 * obj.abs() + 0.3 * torch.einsum("bmn,bm->bn", mask, tight)
    y = score.argmax(1)
    return (xv, xc, A), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [32, 48, 64][seed % 3]
    rounds = [1, 2, 1][seed % 3]
    bs = [16, 24, 12][seed % 3]
    lr = [0.03, 0.02, 0.03][seed % 3]
    steps = 120
    n, m = 24, 16
    torch.manual_seed(seed)
    model = BranchingGCNN(6, 4, h, rounds)
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            if fixed:
                nn.init.xavier_uniform_(mod.weight)
            else:
                nn.init.normal_(mod.weight, 0.0, 1.0)      # tf.random_normal default stddev=1.0
            if mod.bias is not None:
                nn.init.zeros_(mod.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_instances(g, bs, n, m) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
