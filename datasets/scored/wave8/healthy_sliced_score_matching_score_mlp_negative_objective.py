"""Sliced score matching (Song et al. 2019) of a 2-d mixture density with a score MLP s(x):
the per-batch objective is E[ v^T (ds/dx) v + 0.5 (v^T s(x))^2 ] with Rademacher projections v,
where the Jacobian-vector product is taken with autograd (create_graph=True) inside the forward.
The objective has no lower bound at 0: it equals the Fisher divergence minus a data constant and
is strongly NEGATIVE once the score is learned, and it is noisy because of the random
projections.  A negative, ever-decreasing loss with second-order autograd looks alarming but is
exactly what a healthy score-matching run produces (here it goes from about +0.5 to below -1
within 250 steps and keeps falling towards its optimum of roughly -16)."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Song, Garg, Shi, Ermon 'Sliced Score Matching' (UAI 2019); Hyvarinen 2005 score matching; "
          "negative SSM objective discussions")


class ScoreNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 128), nn.Softplus(), nn.Linear(128, 128), nn.Softplus(),
                                 nn.Linear(128, 2))

    def forward(self, x, v):
        x = x.detach().requires_grad_(True)
        s = self.net(x)
        sv = (s * v).sum()
        jvp = torch.autograd.grad(sv, x, create_graph=True)[0]      # v^T ds/dx
        return {"vjv": (jvp * v).sum(1), "proj": (s * v).sum(1)}


def ssm_loss(out, _):
    return (out["vjv"] + 0.5 * out["proj"] ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    ang = torch.arange(4) * (torch.pi / 2)
    centers = torch.stack([torch.cos(ang), torch.sin(ang)], 1) * 1.5

    def sample(n):
        x = centers[torch.randint(0, 4, (n,), generator=g)] + 0.25 * torch.randn(n, 2, generator=g)
        v = torch.randint(0, 2, (n, 2), generator=g).float() * 2 - 1
        return (x, v), torch.zeros(n)

    steps = 250
    batches = [sample(256) for _ in range(steps)]
    model = ScoreNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=ssm_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
