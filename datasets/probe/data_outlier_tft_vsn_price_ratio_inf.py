"""Temporal Fusion Transformer (Lim et al. 2021)-style demand forecaster: per-variable embeddings,
a variable selection network (GRN + softmax over variables), LSTM encoder, interpretable attention,
quantile (pinball) loss; the model returns a dict. One covariate is unit price = revenue / units sold.
Mid-run, a couple of batches come from a corrupt shard where a stock-out store logged units = 0 with
non-zero revenue, so price is inf: the VSN embedding turns it into inf/NaN and the run is NaN from then on.
fixed=True: rows with non-finite features are filtered out of every batch (same data otherwise).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("TFT (arXiv 1912.09363) / pytorch-forecasting TemporalFusionTransformer; known pattern of "
          "derived ratio features (revenue/units) hitting division by zero in a few corrupt rows, "
          "e.g. pytorch-forecasting issues about NaN loss from inf values in covariates")

T_IN, H, V, D = 24, 6, 5, 16
QUANTILES = (0.1, 0.5, 0.9)


class GRN(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.skip = nn.Linear(d_in, d_out) if d_in != d_out else nn.Identity()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.glu = nn.Linear(d_hidden, 2 * d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, a):
        h = self.fc2(F.elu(self.fc1(a)))
        return self.norm(self.skip(a) + F.glu(self.glu(h), dim=-1))


class VariableSelection(nn.Module):
    def __init__(self, n_vars, d):
        super().__init__()
        self.prescalers = nn.ModuleList([nn.Linear(1, d) for _ in range(n_vars)])
        self.flat_grn = GRN(n_vars * d, d, n_vars)
        self.var_grns = nn.ModuleList([GRN(d, d, d) for _ in range(n_vars)])

    def forward(self, x):                          # x: (B, T, V)
        emb = [pre(x[..., i:i + 1]) for i, pre in enumerate(self.prescalers)]
        weights = torch.softmax(self.flat_grn(torch.cat(emb, -1)), dim=-1)        # (B, T, V)
        processed = torch.stack([grn(e) for grn, e in zip(self.var_grns, emb)], -2)  # (B,T,V,D)
        return (weights.unsqueeze(-1) * processed).sum(-2), weights


class TFTLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.vsn = VariableSelection(V, D)
        self.lstm = nn.LSTM(D, D, batch_first=True)
        self.post_lstm = GRN(D, D, D)
        self.attn = nn.MultiheadAttention(D, 1, batch_first=True)
        self.post_attn = GRN(D, D, D)
        self.head = nn.Linear(D * T_IN, H * len(QUANTILES))

    def forward(self, x):
        z, var_w = self.vsn(x)
        h, _ = self.lstm(z)
        h = self.post_lstm(h + z)
        a, attn_w = self.attn(h, h, h)
        h = self.post_attn(a + h)
        q = self.head(h.flatten(1)).view(-1, H, len(QUANTILES))
        return {"prediction": q, "variable_weights": var_w, "attention": attn_w}


def quantile_loss(out, y):
    err = y.unsqueeze(-1) - out["prediction"]
    q = torch.tensor(QUANTILES)
    return torch.maximum(q * err, (q - 1) * err).mean()


def _windows(g, n, corrupt=False):
    t = torch.arange(T_IN + H).float()
    phase = torch.rand(n, 1, generator=g) * 6.28
    promo = (torch.rand(n, T_IN + H, generator=g) < 0.15).float()
    base_price = 2 + 3 * torch.rand(n, 1, generator=g)
    price = base_price * (1 - 0.25 * promo) * (1 + 0.03 * torch.randn(n, T_IN + H, generator=g))
    temp = torch.sin(2 * 3.1416 * t / 24 + phase) + 0.2 * torch.randn(n, T_IN + H, generator=g)
    units = (20 + 8 * torch.sin(2 * 3.1416 * t / 7 + phase) + 12 * promo - 3 * (price - 3.5)
             + 3 * temp + 1.5 * torch.randn(n, T_IN + H, generator=g)).clamp_min(1.0).round()
    revenue = units * price
    if corrupt:   # stock-out rows: units logged as 0 while revenue (returns, pre-orders) is kept
        rows = torch.randperm(n, generator=g)[:3]
        cols = torch.randint(0, T_IN, (3,), generator=g)
        units[rows, cols] = 0.0
    unit_price = revenue / units                              # inf where units == 0
    y = (units - 24) / 8                                      # scaled demand
    dow = torch.cos(2 * 3.1416 * t / 7 + phase)
    x = torch.stack([y[:, :T_IN], unit_price[:, :T_IN] - 3.5, promo[:, :T_IN],
                     temp[:, :T_IN], dow[:, :T_IN]], -1)
    return x, y[:, T_IN:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 160, 64
    bad = int(torch.randint(70, 110, (1,), generator=g))
    batches = []
    for s in range(steps):
        x, y = _windows(g, bs, corrupt=s in (bad, bad + 9))
        if fixed:                                 # drop rows with non-finite features
            keep = torch.isfinite(x).all(-1).all(-1)
            x, y = x[keep], y[keep]
        batches.append((x, y))
    model = TFTLite()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=quantile_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
