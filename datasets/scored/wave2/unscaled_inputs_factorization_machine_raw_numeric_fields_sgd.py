"""Factorization machine for basket-value regression on a mix of one-hot categorical fields and
numeric user features (age in years, income in k$, lifetime purchase count, tenure in days). The
numeric columns are fed raw: their values reach hundreds to thousands, and the FM's pairwise term
multiplies them together (x_i * x_j up to ~1e6), so the first predictions are ~1e3-1e4 off a target
of order 1, the MSE is ~1e6-1e8 from step 0, and each SGD step on those gradients overshoots further
until the loss is inf/NaN. The fixed run only z-scores the numeric columns (same statistics for
every batch) before the same model."""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "numeric_v"
SOURCE = "Rendle 2010 factorization machines with real-valued features; libFM / pyFM / fastFM docs: scale numeric features, otherwise SGD diverges"


class FM(nn.Module):
    def __init__(self, n_cat, n_num, k):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1))
        self.cat_w = nn.Embedding(n_cat, 1)
        self.cat_v = nn.Embedding(n_cat, k)
        self.numeric_w = nn.Linear(n_num, 1, bias=False)
        self.numeric_v = nn.Linear(n_num, k, bias=False)   # v_i * x_i for each numeric feature
        nn.init.normal_(self.cat_v.weight, 0, 0.1)
        nn.init.normal_(self.numeric_v.weight, 0, 0.1)
        nn.init.zeros_(self.cat_w.weight)

    def forward(self, cat_ids, num):
        vc = self.cat_v(cat_ids)                                   # B, Fc, k
        vn = num.unsqueeze(-1) * self.numeric_v.weight.t().unsqueeze(0)   # B, Fn, k
        v = torch.cat([vc, vn], 1)
        pair = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(-1)
        lin = self.cat_w(cat_ids).sum((1, 2)) + self.numeric_w(num).squeeze(-1)
        return self.bias + lin + pair


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_fields = [3, 4, 5][seed % 3]
    card = [10, 8, 6][seed % 3]
    k = [8, 6, 10][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = [100, 80, 120][seed % 3]
    lr = [0.02, 0.03, 0.02][seed % 3]
    n = bs * 10
    cats = torch.randint(0, card, (n, n_fields), generator=g) + torch.arange(n_fields) * card
    z = torch.randn(n, 4, generator=g)
    raw = torch.stack([40 + 12 * z[:, 0],                 # age (years)
                       torch.exp(4.0 + 0.5 * z[:, 1]),     # income (k$)
                       torch.exp(3.5 + 1.0 * z[:, 2]),     # lifetime purchases
                       900 + 600 * z[:, 3].abs()], 1)      # tenure (days)
    cat_eff = torch.randn(n_fields * card, generator=g) * 0.5
    y = cat_eff[cats].sum(1) + 0.6 * z[:, 1] + 0.4 * z[:, 2] + 0.3 * z[:, 0] * z[:, 2] \
        + 0.1 * torch.randn(n, generator=g)
    mu, sd = raw.mean(0), raw.std(0)
    num = (raw - mu) / sd if fixed else raw
    batches = []
    for s in range(steps):
        i = (s % 10) * bs
        batches.append(((cats[i:i + bs], num[i:i + bs]), y[i:i + bs]))
    model = FM(n_fields * card, 4, k)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, t: ((o - t) ** 2).mean(),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
