"""Contrastive pre-training on multichannel sensor windows (TS-TCC / TS2Vec-like instance
contrast): a dilated 1-D temporal conv net (ReLU), pooling over time, a Linear-Tanh-Linear
projection head, L2-normalised embeddings and NT-Xent (temperature 0.2), Adagrad.

Mechanism: the temporal pooling is ``feats.sum(dim=-1)`` instead of ``mean`` (a porting
slip from a per-frame loss).  The ReLU features are non-negative with a large common
component, so the pooled vector is ~T (64-128) times larger than intended and points the
same way for every window: already at init the tanh pre-activations are ~2 in size and
93-98% of them have the same sign for every window.  The first Adagrad step moves every
weight by ~lr, and on inputs this large that shifts the pre-activations by tens: from step
1 on they are ~100-300 in size, every tanh unit is pinned at +-1 with the same sign pattern
for every window (1 - tanh^2 == 0 in float32), and no gradient reaches the TCN or the first
head layer again.  The embedding is the same for every sample and the NT-Xent loss sits at
log(2N - 1) (no inf/NaN).

ORIGIN: ``head.1`` - the Tanh of the projection head is the saturated unit; the TCN below
is healthy but cut off from the gradient.

Fix: mean pooling over time (pre-activations of order 1, tanh in its linear range).  Same
model, optimiser, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "head.1"
SOURCE = ("TS-TCC (Eldele et al. 2021) / TS2Vec-style instance contrast; tanh projection heads "
          "saturating on sum-pooled (instead of mean-pooled) temporal features - a common "
          "porting slip reported as 'contrastive loss stuck at log(2N-1)'")


class TCN(nn.Module):
    def __init__(self, c_in, c, n_layers):
        super().__init__()
        layers = []
        d = c_in
        for i in range(n_layers):
            layers += [nn.Conv1d(d, c, 3, padding=2 ** i, dilation=2 ** i), nn.ReLU()]
            d = c
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class TSContrast(nn.Module):
    def __init__(self, c_in, c, n_layers, emb, sum_pool):
        super().__init__()
        self.tcn = TCN(c_in, c, n_layers)
        self.head = nn.Sequential(nn.Linear(c, c), nn.Tanh(), nn.Linear(c, emb))
        self.sum_pool = sum_pool

    def forward(self, xa, xb):
        f = self.tcn(torch.cat([xa, xb]))
        pooled = f.sum(-1) if self.sum_pool else f.mean(-1)
        return self.head(pooled)


def nt_xent(z, target, tau=0.2):
    z = F.normalize(z, dim=1)
    n2 = z.shape[0]
    n = n2 // 2
    sim = (z @ z.T / tau).masked_fill(torch.eye(n2, dtype=torch.bool), -1e9)
    pos = torch.cat([torch.arange(n, n2), torch.arange(0, n)])
    return F.cross_entropy(sim, pos)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [32, 48, 40][seed % 3]
    n_layers = [3, 4, 3][seed % 3]
    T = [64, 96, 128][seed % 3]
    bs = [32, 24, 32][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    steps = 100
    c_in, n_lat = 6, 5
    t = torch.arange(T).float()
    mix = torch.randn(n_lat, c_in, generator=g)
    batches = []
    for _ in range(steps):
        fr = 0.05 + 0.2 * torch.rand(bs, n_lat, 1, generator=g)
        ph = 6.28 * torch.rand(bs, n_lat, 1, generator=g)
        amp = torch.rand(bs, n_lat, 1, generator=g)
        src = amp * torch.sin(fr * t + ph)                       # bs, n_lat, T
        x = torch.einsum("blt,lc->bct", src, mix)
        def view():
            scale = 0.8 + 0.4 * torch.rand(bs, c_in, 1, generator=g)
            shift = int(torch.randint(-4, 5, (1,), generator=g))
            return torch.roll(x, shift, -1) * scale + 0.1 * torch.randn(bs, c_in, T, generator=g)
        batches.append(((view(), view()), torch.zeros(bs)))
    model = TSContrast(c_in, c, n_layers, 32, sum_pool=not fixed)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nt_xent, batches=batches, steps=steps)
