"""Deep Sets estimator (per-point phi MLP, permutation-invariant pooling, rho MLP with a tanh
output so the estimate stays in (-1, 1)) that predicts the correlation coefficient of 2-D point
clouds with 256 points each, trained with centered RMSprop + momentum. The pooling is a plain
sum, so rho sees ~256x the mean point feature and its final pre-activation is in the hundreds:
the tanh head sits at +/-1 for every set, tanh' is exactly 0 in fp32 and no gradient reaches rho
or phi; the loss never moves. fixed=True: mean pooling (sum / set size), pre-activations O(1).
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "rho.5"
SOURCE = ("Zaheer et al. 2017 'Deep Sets' (sum pooling, population-statistic estimation task); "
          "Wagstaff et al. 2019 on sum vs mean pooling for large sets; tanh output head saturated by large "
          "pre-activations (Glorot & Bengio 2010); centered RMSprop with momentum (Graves 2013).")

N_POINTS, BATCH, STEPS = 256, 32, 120


class DeepSets(nn.Module):
    def __init__(self, pool):
        super().__init__()
        self.pool = pool
        self.phi = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, 1), nn.Tanh())

    def forward(self, pts):                      # (B, N, 2)
        h = self.phi(pts)
        h = h.sum(1) if self.pool == "sum" else h.mean(1)
        return self.rho(h).squeeze(-1)


def _clouds(g):
    batches = []
    for _ in range(STEPS):
        # correlated 2-D Gaussian clouds; target: the correlation coefficient
        r = (torch.rand(BATCH, generator=g) * 1.8 - 0.9).view(BATCH, 1)
        z1 = torch.randn(BATCH, N_POINTS, generator=g)
        z2 = torch.randn(BATCH, N_POINTS, generator=g)
        pts = torch.stack([z1, r * z1 + (1 - r ** 2).sqrt() * z2], -1)
        batches.append((pts, r.squeeze(1)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = _clouds(g)
    model = DeepSets("mean" if fixed else "sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, eps=1e-8,
                                    momentum=0.9, centered=True)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
