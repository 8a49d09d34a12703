"""DLinear-style long-horizon forecaster (moving-average trend/seasonal decomposition, one linear
map per component from a 96-step look-back window to a 24-step horizon) trained with SGD+momentum.
The learning rate was copied from a tabular recipe; with a 96-wide input the effective curvature is
~96x larger, so every momentum step overshoots, the weights oscillate with growing amplitude and the
MSE explodes within a few dozen steps (to inf/NaN, or to ~1e18 where it stays finite). Lowering the lr trains smoothly."""
import torch, torch.nn as nn, math
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "DLinear (Zeng et al. 2023) reimplementations; forum reports 'DLinear loss becomes nan with SGD lr=0.1'"

class Decomp(nn.Module):
    def __init__(self, k):
        super().__init__(); self.pool = nn.AvgPool1d(k, stride=1, padding=k // 2, count_include_pad=False)
    def forward(self, x):
        trend = self.pool(x.unsqueeze(1)).squeeze(1)[:, : x.shape[1]]
        return x - trend, trend

class DLinear(nn.Module):
    def __init__(self, L, H, k):
        super().__init__(); self.decomp = Decomp(k)
        self.seasonal = nn.Linear(L, H); self.trend = nn.Linear(L, H)
    def forward(self, x):
        s, t = self.decomp(x); return self.seasonal(s) + self.trend(t)

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    L, H = 96, 24; k = [25, 13, 25][seed % 3]
    bs = [32, 48, 64][seed % 3]; steps = [80, 100, 120][seed % 3]
    lr = 0.01 if fixed else [2.0, 3.0, 4.0][seed % 3]
    model = DLinear(L, H, k)
    t = torch.arange(0, 4000, dtype=torch.float32)
    series = torch.sin(2 * math.pi * t / 24) + 0.5 * torch.sin(2 * math.pi * t / 168) + 0.3 * torch.randn(4000, generator=g)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, 4000 - L - H, (bs,), generator=g)
        w = torch.stack([series[i:i + L + H] for i in idx.tolist()])
        batches.append((w[:, :L].contiguous(), w[:, L:].contiguous()))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
