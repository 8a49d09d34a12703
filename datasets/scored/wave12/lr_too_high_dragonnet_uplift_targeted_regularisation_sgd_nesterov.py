"""DragonNet (Shi, Blei & Veitch 2019) for campaign uplift on 20 standardised customer features:
a shared ELU representation feeds three heads, the control and treated outcome regressors and a
propensity head, plus the scalar epsilon of targeted regularisation; inputs are a tuple (x, t),
the output a dict, and the loss is factual MSE + alpha * BCE(propensity, t) + beta * targeted-
regularisation term (all on a standardised outcome).  Optimiser: SGD with Nesterov momentum 0.9
as in the reference implementation, but with lr 0.15 instead of the reference 1e-5..1e-3 range
(taken from a learning-rate grid written for plain SGD without momentum).  The effective step
with momentum 0.9 is ~10x lr; every update overshoots, the representation and head weights grow
each step, the loss grows geometrically (2.8, 3.5, 5, 9, 25, ...) and overflows to inf/NaN in
under ten steps.  Fixed: lr 0.01, nothing else changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Shi, Blei & Veitch 2019 'Adapting Neural Networks for the Estimation of Treatment Effects' "
          "(DragonNet, targeted regularisation; reference code uses SGD with Nesterov momentum); "
          "divergence of momentum SGD when the lr is set as if for plain SGD")


class DragonNet(nn.Module):
    def __init__(self, n_feat=20, rep=48, head=24):
        super().__init__()
        self.rep = nn.Sequential(nn.Linear(n_feat, rep), nn.ELU(), nn.Linear(rep, rep), nn.ELU(),
                                 nn.Linear(rep, rep), nn.ELU())
        self.prop = nn.Linear(rep, 1)
        self.y0 = nn.Sequential(nn.Linear(rep, head), nn.ELU(), nn.Linear(head, 1))
        self.y1 = nn.Sequential(nn.Linear(rep, head), nn.ELU(), nn.Linear(head, 1))
        self.epsilon = nn.Parameter(torch.zeros(1))

    def forward(self, x, t):
        z = self.rep(x)
        return {"y0": self.y0(z).squeeze(-1), "y1": self.y1(z).squeeze(-1),
                "g_logit": self.prop(z).squeeze(-1), "epsilon": self.epsilon, "t": t}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, bs, steps = 20, 128, 150
    wp = torch.randn(n_feat, generator=g) / 5
    w0 = torch.randn(n_feat, generator=g) / 4
    wt = torch.randn(n_feat, generator=g) / 4

    def sample(n):
        x = torch.randn(n, n_feat, generator=g)
        t = (torch.rand(n, generator=g) < torch.sigmoid(x @ wp)).float()
        y = torch.tanh(x @ w0) * 1.5 + 0.3 * x[:, 2] * x[:, 3] + t * (0.5 + 0.5 * torch.tanh(x @ wt)) \
            + 0.3 * torch.randn(n, generator=g)
        return x, t, y

    _, _, y_ref = sample(4096)
    mu, sd = y_ref.mean(), y_ref.std()
    batches = []
    for s in range(steps):
        x, t, y = sample(bs)
        batches.append(((x, t), (y - mu) / sd))

    model = DragonNet(n_feat)
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 0.15, momentum=0.9, nesterov=True)
    alpha, beta = 1.0, 1.0

    def loss_fn(out, y):
        t = out["t"]
        y_pred = torch.where(t > 0.5, out["y1"], out["y0"])
        mse = ((y_pred - y) ** 2).mean()
        bce = F.binary_cross_entropy_with_logits(out["g_logit"], t)
        gp = torch.sigmoid(out["g_logit"]).clamp(0.01, 0.99)
        h = t / gp - (1 - t) / (1 - gp)
        y_pert = y_pred + out["epsilon"] * h
        treg = ((y - y_pert) ** 2).mean()
        return mse + alpha * bce + beta * treg

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
