"""A small STGCN-style spatio-temporal forecaster (temporal gated conv -> graph conv over a fixed
normalised sensor adjacency -> temporal conv -> per-node output) predicts the next 5-minute
traffic flow of 10 loop detectors from the previous 12 readings, trained with SGD + momentum at
the usual lr=0.01. The loader feeds the raw detector counts (vehicles/hour, roughly 200-1800)
as inputs and as regression targets, skipping the z-score step of the reference pipeline. The
first temporal convolution therefore sees inputs three orders of magnitude above unit scale, the
MSE starts around 1e6, and the first SGD steps overshoot until the loss overflows to inf/NaN.
The fix standardises inputs and targets with the training-set mean and std (loss computed in
standardised units); lr, model and data are otherwise unchanged."""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "temporal1.conv"
SOURCE = ("STGCN (Yu et al. 2018) / PeMS & METR-LA traffic forecasting pipelines, which z-score "
          "the flow before training; common issue reports of NaN loss when the raw PeMS "
          "vehicle counts are fed directly.")

N, T_IN = 10, 12


class TemporalGLU(nn.Module):
    def __init__(self, cin, cout, k=3):
        super().__init__()
        self.conv = nn.Conv2d(cin, 2 * cout, (k, 1))

    def forward(self, x):  # x: (B, C, T, N)
        p, q = self.conv(x).chunk(2, dim=1)
        return p * torch.sigmoid(q)


class GraphConv(nn.Module):
    def __init__(self, c, a_hat):
        super().__init__()
        self.register_buffer("a_hat", a_hat)
        self.lin = nn.Linear(c, c)

    def forward(self, x):  # (B, C, T, N)
        h = torch.einsum("nm,bctm->bctn", self.a_hat, x)
        return torch.relu(self.lin(h.permute(0, 2, 3, 1)).permute(0, 3, 1, 2))


class STGCN(nn.Module):
    def __init__(self, a_hat):
        super().__init__()
        self.temporal1 = TemporalGLU(1, 16)
        self.graph = GraphConv(16, a_hat)
        self.temporal2 = TemporalGLU(16, 16)
        self.out = nn.Linear(16 * (T_IN - 4), 1)

    def forward(self, x):  # x: (B, T, N)
        h = self.temporal1(x.unsqueeze(1))
        h = self.graph(h)
        h = self.temporal2(h)  # (B, 16, T-4, N)
        b = h.shape[0]
        h = h.permute(0, 3, 1, 2).reshape(b, N, -1)
        return self.out(h).squeeze(-1)  # (B, N)


def ring_adjacency():
    a = torch.eye(N)
    for i in range(N):
        a[i, (i + 1) % N] = a[(i + 1) % N, i] = 1.0
        a[i, (i + 3) % N] = a[(i + 3) % N, i] = 0.5
    d = a.sum(1).pow(-0.5)
    return d[:, None] * a * d[None, :]


def simulate(g, length):
    t = torch.arange(length, dtype=torch.float32)
    base = 300 + 900 * torch.rand(N, generator=g)
    phase = torch.rand(N, generator=g) * 0.6
    daily = 0.5 * (1 - torch.cos(2 * math.pi * (t[:, None] / 288.0 + phase[None, :])))
    flow = base[None, :] * (0.35 + daily) + 40 * torch.randn(length, N, generator=g)
    return flow.clamp_min(0.0)  # vehicles / hour


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = STGCN(ring_adjacency())
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    series = simulate(g, 2000)
    mu, sd = series[:1500].mean(), series[:1500].std()
    steps, B = 150, 32
    batches = []
    for s in range(steps):
        start = torch.randint(0, 1500 - T_IN - 1, (B,), generator=g)
        x = torch.stack([series[i:i + T_IN] for i in start.tolist()])
        y = torch.stack([series[i + T_IN] for i in start.tolist()])
        if fixed:
            x, y = (x - mu) / sd, (y - mu) / sd
        batches.append((x, y))

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
