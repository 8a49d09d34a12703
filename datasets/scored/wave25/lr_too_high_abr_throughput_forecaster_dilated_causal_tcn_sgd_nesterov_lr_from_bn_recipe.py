"""ABR (adaptive bitrate) throughput predictor: a small dilated causal TCN (Conv1d
blocks with residual connections, ReLU, no normalisation) reads the last 24-40 chunk
download throughputs (log-Mbps, standardised) plus the chunk sizes and predicts the
throughput of the next chunk; MSE, SGD with Nesterov momentum.

Mechanism: the optimiser block was copied from the team's BatchNorm-ResNet recipe
(SGD, momentum 0.9, lr 0.3-0.5).  Without normalisation layers the TCN's loss
curvature is far higher than the BN network's, so lr x (largest curvature) is well
above the SGD/momentum stability limit: the first updates overshoot, each step
amplifies the error, the residual stack and head weights grow geometrically and the
loss reaches inf/NaN within a handful of steps.  Update/weight ratios are ~1e-1 and
above from the first step.

ORIGIN: None -- an optimiser hyper-parameter, not a module, is the cause; all layers
blow up together.

Fix: lr 30x lower (0.01-0.017); same model, data, momentum and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Throughput predictors in ABR research (e.g. Pensieve / Fugu-style TTP predictors, "
          "Bai et al. 2018 TCN); the common 'copied SGD lr 0.1-0.5 from a BN ResNet recipe, "
          "loss goes to NaN' report on PyTorch forums.")


class CausalBlock(nn.Module):
    def __init__(self, ch, dilation, k=3):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv1 = nn.Conv1d(ch, ch, k, dilation=dilation)
        self.conv2 = nn.Conv1d(ch, ch, k, dilation=dilation)

    def forward(self, x):
        h = F.relu(self.conv1(F.pad(x, (self.pad, 0))))
        h = self.conv2(F.pad(h, (self.pad, 0)))
        return F.relu(x + h)


class ThroughputTCN(nn.Module):
    def __init__(self, ch, n_blocks):
        super().__init__()
        self.inp = nn.Conv1d(2, ch, 1)
        self.blocks = nn.ModuleList([CausalBlock(ch, 2 ** i) for i in range(n_blocks)])
        self.head = nn.Linear(ch, 1)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = b(h)
        return self.head(h[:, :, -1])


def _traces(g, n, T):
    base = torch.randn(n, 1, generator=g)
    ar = torch.zeros(n, T + 1)
    e = 0.2 * torch.randn(n, T + 1, generator=g)
    for t in range(1, T + 1):
        ar[:, t] = 0.9 * ar[:, t - 1] + e[:, t]
    # periodic cross traffic on the bottleneck link (period 6-12 chunks)
    period = 6 + 6 * torch.rand(n, 1, generator=g)
    phase = 6.2832 * torch.rand(n, 1, generator=g)
    tt = torch.arange(T + 1).float()[None, :]
    thr = base + ar + 0.6 * torch.sin(6.2832 * tt / period + phase)
    size = 0.5 * torch.randn(n, T, generator=g) + 0.3 * thr[:, :T]
    x = torch.stack([thr[:, :T], size], 1)
    return x, thr[:, T:].clone()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    ch = [32, 48, 24][seed % 3]
    n_blocks = [3, 2, 4][seed % 3]
    lr = [0.4, 0.5, 0.3][seed % 3]
    if fixed:
        lr = lr / 30
    bs = [64, 32, 48][seed % 3]
    T = [32, 24, 40][seed % 3]
    steps = 150
    model = ThroughputTCN(ch, n_blocks)
    batches = [_traces(g, bs, T) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
