"""Set Transformer regressing a district's median house price from raw, unnormalised listing features.

Mechanism
---------
Each sample is a set of 16-32 house listings from one district; each listing
has 5 raw features -- living area (500-4000 sqft), lot size (2e3-2e4 sqft),
year built (1900-2020), bedrooms (1-6), distance to the centre (1e2-2e4 m) --
and the target is the district's median price in dollars (~1e5-4e5).  The
model is a Set Transformer (Lee et al. 2019: two SAB blocks + PMA pooling,
``ln=False`` as in the reference implementation's default) trained with SGD +
momentum at lr 1e-3-2e-3, a setting that is perfectly stable on standardised
data.

Nothing is normalised: inputs of magnitude ~1e3-2e4 go straight into the first
Linear, so q/k are ~1e4, the attention logits q.k / sqrt(d) are ~2e7-6e7
(softmax is one-hot but finite) and the prediction starts at ~1e3 while the
targets are 1e5-3.6e5: the MSE at step 0 is 4.3e10-5.2e10 (measured).  The
largest gradient entry is 2e9-2e10, so the very first SGD update sets weights
to ~3e6-2.5e7.  At step 1 the projections are ~1e11, the attention logits
overflow float32 (inf - inf inside softmax) and the loss is NaN.

ORIGIN = None: the root cause is the data pipeline (unstandardised features and
targets), not a module.

fixed=True: the same listings with each feature standardised (z-score using
the dataset's population statistics) and the target standardised (z-score of
the price); model, init, optimizer and lr are unchanged.  The loss then starts
at ~1 and falls.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Set Transformer (Lee et al. 2019, juho-lee/set_transformer, MAB with ln=False); "
          "'loss is nan / huge from the first iteration' reports on raw tabular features "
          "and dollar-valued targets (California / Ames housing regressions) fixed by StandardScaler")


class MAB(nn.Module):
    def __init__(self, dim_q, dim_k, dim_v, heads):
        super().__init__()
        self.fc_q = nn.Linear(dim_q, dim_v)
        self.fc_k = nn.Linear(dim_k, dim_v)
        self.fc_v = nn.Linear(dim_k, dim_v)
        self.fc_o = nn.Linear(dim_v, dim_v)
        self.dim_v, self.heads = dim_v, heads

    def forward(self, Q, K):
        Q, Kp, V = self.fc_q(Q), self.fc_k(K), self.fc_v(K)
        s = self.dim_v // self.heads
        Q_, K_, V_ = (torch.cat(t.split(s, 2), 0) for t in (Q, Kp, V))
        A = torch.softmax(Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_v), 2)
        O = torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2)
        return O + F.relu(self.fc_o(O))


class SAB(nn.Module):
    def __init__(self, d_in, d_out, heads):
        super().__init__()
        self.mab = MAB(d_in, d_in, d_out, heads)

    def forward(self, X):
        return self.mab(X, X)


class PMA(nn.Module):
    def __init__(self, dim, heads, n_seeds=1):
        super().__init__()
        self.S = nn.Parameter(torch.empty(1, n_seeds, dim))
        nn.init.xavier_uniform_(self.S)
        self.mab = MAB(dim, dim, dim, heads)

    def forward(self, X):
        return self.mab(self.S.repeat(X.size(0), 1, 1), X)


class SetTransformer(nn.Module):
    def __init__(self, d_in, hidden, heads):
        super().__init__()
        self.enc = nn.Sequential(SAB(d_in, hidden, heads), SAB(hidden, hidden, heads))
        self.pool = PMA(hidden, heads)
        self.dec = nn.Linear(hidden, 1)

    def forward(self, X):
        return self.dec(self.pool(self.enc(X))).reshape(-1)


LO = torch.tensor([500.0, 2000.0, 1900.0, 1.0, 100.0])
HI = torch.tensor([4000.0, 20000.0, 2020.0, 6.0, 20000.0])


def district_batch(g, bs, n):
    u = torch.rand(bs, n, 5, generator=g)
    lvl = torch.rand(bs, 1, 5, generator=g)             # district-level character
    u = (0.5 * u + 0.5 * lvl).clamp(0, 1)
    x = LO + u * (HI - LO)
    x[..., 3] = x[..., 3].round()
    x[..., 2] = x[..., 2].round()
    per_house = (120.0 * x[..., 0] + 4.0 * x[..., 1] + 900.0 * (x[..., 2] - 1900)
                 + 15000.0 * x[..., 3]) * torch.exp(-x[..., 4] / 15000.0)
    y = per_house.median(1).values                          # dollars, ~1e5-4e5
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    steps = 250
    n = [24, 16, 32][seed % 3]
    bs = 32
    raw = [district_batch(g, bs, n) for _ in range(steps)]
    if fixed:
        xs = torch.cat([x.reshape(-1, 5) for x, _ in raw])
        ys = torch.cat([y for _, y in raw])
        mx, sx, my, sy = xs.mean(0), xs.std(0), ys.mean(), ys.std()
        batches = [((x - mx) / sx, (y - my) / sy) for x, y in raw]
    else:
        batches = raw
    torch.manual_seed(seed)
    model = SetTransformer(5, [32, 32, 48][seed % 3], [4, 2, 4][seed % 3])
    opt = torch.optim.SGD(model.parameters(), lr=[1e-3, 2e-3, 1.5e-3][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
