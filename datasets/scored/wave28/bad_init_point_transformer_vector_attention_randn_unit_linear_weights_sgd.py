"""Point Transformer (vector self-attention over kNN) shape classifier with hand-written linear
layers whose weights are `torch.randn(in, out)` (unit variance, no 1/sqrt(fan_in)).

Mechanism: the model is written from the paper's equations with its own `PLinear` module
(`self.w = nn.Parameter(torch.randn(d_in, d_out))`), the way many re-implementations start.
Each projection then multiplies the activation scale by about sqrt(d_in) (5-8x here), and the
residual blocks (q/k/v projections, the position-encoding MLP, the attention MLP gamma and the
output projection) stack these gains, so from step 0 the features and the class logits are
orders of magnitude too large.  The cross-entropy and its gradients are enormous; the first SGD
updates are larger still, the logits overflow and the loss turns non-finite within a few steps.

ORIGIN: "embed", the first PLinear (xyz -> features): it is the first module with an unscaled
weight, and the geometric growth of the activation scale starts at its output.

Fix: scale the hand-written weights by 1/sqrt(d_in) (LeCun/Kaiming-style fan-in init); the
architecture, data, optimiser and learning rate stay the same.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "embed"
SOURCE = ("Zhao et al., Point Transformer (ICCV 2021) vector attention; re-implementations that "
          "create weights with torch.randn without fan-in scaling (cf. PyTorch forum 'loss is "
          "nan after a few iterations, custom linear layer randn init')")


class PLinear(nn.Module):
    def __init__(self, d_in, d_out, scaled):
        super().__init__()
        w = torch.randn(d_in, d_out)
        if scaled:
            w = w / math.sqrt(d_in)
        self.w = nn.Parameter(w)
        self.b = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        return x @ self.w + self.b


class PTBlock(nn.Module):
    def __init__(self, d, k, scaled):
        super().__init__()
        self.k = k
        self.to_q = PLinear(d, d, scaled)
        self.to_k = PLinear(d, d, scaled)
        self.to_v = PLinear(d, d, scaled)
        self.pos1 = PLinear(3, d, scaled)
        self.pos2 = PLinear(d, d, scaled)
        self.gamma1 = PLinear(d, d, scaled)
        self.gamma2 = PLinear(d, d, scaled)
        self.out = PLinear(d, d, scaled)

    def forward(self, x, pos):
        # x: (B, N, d), pos: (B, N, 3)
        dist = torch.cdist(pos, pos)
        idx = dist.topk(self.k, dim=-1, largest=False).indices          # (B, N, k)
        b = torch.arange(x.shape[0])[:, None, None]
        q = self.to_q(x)[:, :, None, :]                                   # (B, N, 1, d)
        kk = self.to_k(x)[b, idx]                                         # (B, N, k, d)
        v = self.to_v(x)[b, idx]
        rel = pos[:, :, None, :] - pos[b, idx]                            # (B, N, k, 3)
        delta = self.pos2(F.relu(self.pos1(rel)))
        a = self.gamma2(F.relu(self.gamma1(q - kk + delta)))
        w = torch.softmax(a, dim=2)                                       # per-channel over nbrs
        y = (w * (v + delta)).sum(2)
        return x + self.out(y)


class PointTransformerCls(nn.Module):
    def __init__(self, d, depth, k, n_cls, scaled):
        super().__init__()
        self.embed = PLinear(3, d, scaled)
        self.blocks = nn.ModuleList(PTBlock(d, k, scaled) for _ in range(depth))
        self.head = PLinear(d, n_cls, scaled)

    def forward(self, pos):
        x = self.embed(pos)
        for blk in self.blocks:
            x = blk(x, pos)
        return self.head(x.max(dim=1).values)


def _shape(g, cls, n):
    u = torch.rand(n, 2, generator=g)
    if cls == 0:      # sphere
        p = torch.randn(n, 3, generator=g)
        p = p / p.norm(dim=1, keepdim=True)
    elif cls == 1:    # cube surface
        p = torch.rand(n, 3, generator=g) * 2 - 1
        face = torch.randint(0, 3, (n,), generator=g)
        sign = torch.randint(0, 2, (n,), generator=g).float() * 2 - 1
        p[torch.arange(n), face] = sign
    elif cls == 2:    # cylinder
        th = u[:, 0] * 2 * math.pi
        p = torch.stack([th.cos(), th.sin(), u[:, 1] * 2 - 1], 1)
    else:             # cone
        th = u[:, 0] * 2 * math.pi
        h = u[:, 1]
        p = torch.stack([(1 - h) * th.cos(), (1 - h) * th.sin(), h * 2 - 1], 1)
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
    scale = 0.6 + 0.4 * torch.rand(1, generator=g)
    return (p @ q) * scale + 0.02 * torch.randn(n, 3, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 48, 40][seed % 3]
    depth = [2, 3, 2][seed % 3]
    k = [8, 6, 8][seed % 3]
    batch = [12, 8, 16][seed % 3]
    lr = [0.01, 0.012, 0.008][seed % 3]
    n_pts, n_cls, steps = 48, 4, 150
    model = PointTransformerCls(d, depth, k, n_cls, scaled=fixed)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (batch,), generator=g)
        x = torch.stack([_shape(g, int(c), n_pts) for c in y])
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": F.cross_entropy, "batches": batches,
            "steps": steps}
