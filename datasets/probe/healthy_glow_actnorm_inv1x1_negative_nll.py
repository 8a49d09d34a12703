"""Glow-style normalizing flow (Kingma & Dhariwal 2018) on 8-D tabular data that lies close to a 2-D
manifold: each step is ActNorm (data-dependent init on the first batch), an LU-decomposed invertible
1x1 'convolution' whose log|det| is sum(log|s|), and an affine coupling with scale = sigmoid(h + 2).
Looks alarming but is fine: the NLL per dimension crosses zero and keeps going negative (a density on
thin data is legitimately > 1), with occasional benign spikes late in the run; it stays finite.
fixed=True: identical run (nothing to fix).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("openai/glow and rosinality/glow-pytorch (ActNorm data-dependent init, InvConv2dLU with "
          "log|det| = sum(log|s|), affine coupling with sigmoid(h + 2) scale); negative NLL on "
          "low-dimensional data is a common 'is my loss wrong?' question")

D = 8


class ActNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, d))
        self.logs = nn.Parameter(torch.zeros(1, d))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.initialized.item() == 0:
            with torch.no_grad():
                self.loc.data.copy_(-x.mean(0, keepdim=True))
                self.logs.data.copy_(-torch.log(x.std(0, keepdim=True) + 1e-6))
                self.initialized.fill_(1)
        return (x + self.loc) * torch.exp(self.logs), self.logs.sum().expand(x.shape[0])


class InvConvLU(nn.Module):
    def __init__(self, d, g):
        super().__init__()
        w = torch.linalg.qr(torch.randn(d, d, generator=g))[0]
        P, L, U = torch.linalg.lu(w)
        s = torch.diagonal(U)
        self.register_buffer("P", P)
        self.register_buffer("sign_s", torch.sign(s))
        self.register_buffer("l_mask", torch.tril(torch.ones(d, d), -1))
        self.register_buffer("eye", torch.eye(d))
        self.L = nn.Parameter(L)
        self.U = nn.Parameter(torch.triu(U, 1))
        self.log_s = nn.Parameter(torch.log(torch.abs(s)))

    def forward(self, x):
        W = self.P @ (self.L * self.l_mask + self.eye) @ (self.U * self.l_mask.T + torch.diag(self.sign_s * torch.exp(self.log_s)))
        return x @ W.T, self.log_s.sum().expand(x.shape[0])


class AffineCoupling(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d // 2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, d))
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x):
        xa, xb = x.chunk(2, dim=1)
        h = self.net(xa)
        shift, raw = h[:, 0::2], h[:, 1::2]
        scale = torch.sigmoid(raw + 2.0)
        yb = (xb + shift) * scale
        return torch.cat([xa, yb], dim=1), torch.log(scale).sum(1)


class Glow(nn.Module):
    def __init__(self, d, n_steps, hidden, g):
        super().__init__()
        self.flows = nn.ModuleList()
        for _ in range(n_steps):
            self.flows.append(ActNorm(d))
            self.flows.append(InvConvLU(d, g))
            self.flows.append(AffineCoupling(d, hidden))

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for f in self.flows:
            x, ld = f(x)
            logdet = logdet + ld
        log_pz = -0.5 * (x ** 2).sum(1) - 0.5 * x.shape[1] * math.log(2 * math.pi)
        return log_pz + logdet


def _sample(n, g, A):
    t = torch.rand(n, generator=g) * 2 * math.pi
    r = 1.0 + 0.3 * torch.sin(3 * t)
    z = torch.stack([r * torch.cos(t), r * torch.sin(t)], 1)
    feats = torch.cat([z, z ** 2, z[:, :1] * z[:, 1:], torch.sin(2 * z)[:, :1]], 1)[:, :6]
    x = torch.cat([feats, z], 1) @ A
    return 3.0 * x + 5.0 + 0.01 * torch.randn(n, D, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    A = torch.linalg.qr(torch.randn(D, D, generator=g))[0]
    model = Glow(D, n_steps=6, hidden=64, g=g)
    steps, n = 300, 256
    batches = [(_sample(n, g, A), torch.zeros(n)) for _ in range(steps)]
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(log_px, _unused):
        # NLL in nats per dimension
        return -log_px.mean() / D

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
