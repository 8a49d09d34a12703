"""VectorNet-style motion forecaster (polyline subgraphs + global attention + MLP decoder),
norm-free variant, with every Linear re-initialised by a TF1-era helper
`nn.init.normal_(w, std=0.01)` and plain SGD.

Mechanism: with fan-in 12..96 and std 0.01, each Linear shrinks the activation scale by
~0.01*sqrt(fan_in/2) ~ 0.05, so after the polyline subgraph layers, the attention and the
decoder MLP the signal reaching the output is ~1e-7 of the input.  The gradient of every
weight is proportional to these vanishing activations, so only the output bias moves; the
targets (future displacements of the agent, sign-symmetric) have zero mean, so the loss
sits at the target variance: a stall from step 0.
ORIGIN: the first subgraph Linear, where the geometric shrinkage begins (all later layers
share the same init, but the collapse starts at the first one).
Fix: keep PyTorch's default (kaiming-uniform) init of the Linears.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "subgraph.0.mlp"
SOURCE = "VectorNet (Gao et al. 2020) reimplementations ported from TF1 code using random_normal(stddev=0.01) init; vanishing-signal stalls reported on forums for norm-free ports"


class SubgraphLayer(nn.Module):
    def __init__(self, d_in, d):
        super().__init__()
        self.mlp = nn.Linear(d_in, d)
        self.act = nn.ReLU()

    def forward(self, x):  # x: (B, P, V, d_in)
        h = self.act(self.mlp(x))
        pooled = h.max(dim=2, keepdim=True).values.expand_as(h)
        return torch.cat([h, pooled], dim=-1)


class VectorNet(nn.Module):
    def __init__(self, depth, d, horizon):
        super().__init__()
        layers, d_in = [], 6
        for _ in range(depth):
            layers.append(SubgraphLayer(d_in, d))
            d_in = 2 * d
        self.subgraph = nn.Sequential(*layers)
        self.q = nn.Linear(2 * d, 2 * d)
        self.k = nn.Linear(2 * d, 2 * d)
        self.v = nn.Linear(2 * d, 2 * d)
        self.decoder = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, horizon * 2))

    def forward(self, x):
        h = self.subgraph(x).max(dim=2).values          # (B, P, 2d) polyline features
        q, k, v = self.q(h[:, :1]), self.k(h), self.v(h)
        att = torch.softmax(q @ k.transpose(1, 2) / k.shape[-1] ** 0.5, dim=-1)
        g = (att @ v)[:, 0]
        return self.decoder(g)


def _make_batch(g, B, P, V, horizon):
    vel = torch.randn(B, 2, generator=g)
    t = torch.arange(V, dtype=torch.float32)
    start = (t[None, :, None] - V) * vel[:, None, :]
    agent = torch.cat([start, start + vel[:, None, :], torch.ones(B, V, 1), torch.zeros(B, V, 1)], -1)
    lanes = torch.randn(B, P - 1, V, 6, generator=g)
    lanes[..., 4] = 0.0
    lanes[..., 5] = 1.0
    x = torch.cat([agent[:, None], lanes], 1)
    fut = torch.arange(1, horizon + 1, dtype=torch.float32)
    y = (fut[None, :, None] * vel[:, None, :]).reshape(B, -1) * 0.3
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [(3, 32, 0.02, 32), (3, 48, 0.01, 24), (4, 32, 0.02, 16)][seed % 3]
    depth, d, lr, B = cfg
    torch.manual_seed(seed)
    horizon = 6
    model = VectorNet(depth, d, horizon)
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.01)
                nn.init.zeros_(m.bias)
    g = torch.Generator().manual_seed(1000 + seed)
    steps = 120
    batches = [_make_batch(g, B, 4, 6, horizon) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
