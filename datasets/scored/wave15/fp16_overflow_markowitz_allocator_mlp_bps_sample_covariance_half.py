"""End-to-end mean-variance ("Markowitz layer") allocator: an MLP reads per-asset signals and
emits long/short portfolio weights (softmax-free, L1-normalised tanh scores); the loss is the
negative mean-variance utility  -(w.mu) + gamma * w' Sigma w  evaluated on the next 60 days of
realised returns.  Training runs under torch.autocast(float16) for speed.

Mechanism: realised returns are kept in basis points (the desk's convention), and the loss
builds the sample covariance as  R.T @ R / (T - 1).  Under fp16 autocast that matmul runs in
half precision: sums of 60 squared daily moves of ~100-300 bp reach 1e6, far past the
fp16 max of 65504, so Sigma has inf entries, w' Sigma w is inf/NaN and the loss is
non-finite from the first steps.  A GradScaler would not help (the forward overflows).

ORIGIN: None - the overflowing matmul is in the loss, not in a model module.
Fix: autocast with bfloat16 (same exponent range as fp32), everything else unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = "End-to-end portfolio optimisation (e.g. Zhang, Zohren & Roberts 2020 'Deep learning for portfolio optimisation'); fp16 overflow of second moments in autocast"


class Allocator(nn.Module):
    def __init__(self, n_feat, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_feat, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x):  # x: (B, N assets, F)
        s = torch.tanh(self.net(x).squeeze(-1))
        return s / (s.abs().sum(-1, keepdim=True) + 1e-6)  # gross exposure 1


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(N=20, w=32, bs=16, lr=1e-3, gamma=2e-4), dict(N=30, w=48, bs=8, lr=5e-4, gamma=1e-4), dict(N=16, w=24, bs=24, lr=2e-3, gamma=3e-4)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(700 + seed)
    model = Allocator(6, cfg["w"])
    T = 60
    gamma = cfg["gamma"]

    def loss_fn(w, R):  # R: (B, T, N) future daily returns in bp
        mu = R.mean(1)
        Rc = R - mu[:, None]
        sigma = Rc.transpose(1, 2) @ Rc / (T - 1)
        var = (w[:, None, :] @ sigma @ w[:, :, None]).squeeze()
        return (-(w * mu).sum(-1) + gamma * var).mean()

    steps = 60
    batches = []
    for _ in range(steps):
        B, N = cfg["bs"], cfg["N"]
        x = torch.randn(B, N, 6, generator=g)
        alpha = 8.0 * x[:, :, 0] - 4.0 * x[:, :, 1]  # bp/day drift predicted by signals
        vol = 100 + 150 * torch.rand(B, N, generator=g)
        R = alpha[:, None, :] + vol[:, None, :] * torch.randn(B, T, N, generator=g)
        batches.append((x, R))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16)
