"""Conditional autoencoder asset-pricing model (Gu, Kelly & Xiu 2021): a beta network maps
each stock's characteristics to K factor loadings, a factor network maps the returns of
characteristic-managed portfolios to K factors, and the model fits r_i = beta_i . f with MSE
on (standardised) excess returns.

Mechanism: the user switched from Adam (lr 1e-3 in the paper's code) to SGD with momentum 0.9
but kept a "large" lr tuned for a linear factor regression.  The loss is a product of two
networks' outputs (beta . f), so its curvature grows with the weight scale: the first updates
overshoot, update/weight ratios are >>1e-3, beta and f grow multiplicatively and the loss
diverges to inf/NaN within a few dozen steps.

ORIGIN: None - a global optimiser setting.
Fix: lr lowered 10x (same SGD with momentum).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Gu, Kelly & Xiu 2021 'Autoencoder asset pricing models'; SGD momentum divergence with lr copied from linear regression"


class CondAE(nn.Module):
    def __init__(self, n_char, n_port, K, width):
        super().__init__()
        self.beta = nn.Sequential(nn.Linear(n_char, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, K))
        self.factor = nn.Linear(n_port, K)

    def forward(self, chars, port_ret):  # chars: (B, N, C), port_ret: (B, P)
        b = self.beta(chars)  # (B, N, K)
        f = self.factor(port_ret)  # (B, K)
        return (b @ f[:, :, None]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(N=64, K=3, w=32, lr=0.3), dict(N=96, K=5, w=24, lr=0.2), dict(N=48, K=4, w=48, lr=0.4)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(800 + seed)
    C = 12
    model = CondAE(C, C, cfg["K"], cfg["w"])
    W_true = torch.randn(C, 3, generator=g) * 0.5
    steps = 80
    batches = []
    for _ in range(steps):
        B, N = 8, cfg["N"]
        chars = torch.rand(B, N, C, generator=g) * 2 - 1  # rank-normalised characteristics in [-1, 1]
        f = torch.randn(B, 3, generator=g)
        r = (chars @ W_true @ f[:, :, None]).squeeze(-1) + 0.5 * torch.randn(B, N, generator=g)
        port = (chars.transpose(1, 2) @ r[:, :, None]).squeeze(-1) / N  # managed-portfolio returns
        batches.append(((chars, port), r))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"] / 10 if fixed else cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
