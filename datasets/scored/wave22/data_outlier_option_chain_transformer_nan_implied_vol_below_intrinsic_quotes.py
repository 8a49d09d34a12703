"""Option-chain transformer for implied-volatility nowcasting: every quote of one underlying's
chain is a token (log-moneyness, time to maturity, bid-ask spread, volume rank, put/call flag);
a small Transformer encoder lets quotes attend to each other (smile / term-structure
consistency) and a head predicts each quote's implied volatility; loss = MSE to the IV backed
out of the mid price by the data pipeline's Black-Scholes inversion.

Mechanism: the IV inversion returns NaN when a mid quote is below intrinsic value (stale quote
after a jump, crossed book at the open): no volatility reproduces such a price. One chain-batch
late in the feed contains a handful of these quotes, so a few targets are NaN. MSELoss averages
them in, the loss is NaN at that step, the backward pass writes NaN into every gradient, and
Adam copies NaN into every weight: all later losses are NaN. The rest of the data is clean.

ORIGIN: None -- the corruption is in the targets of one batch; no module misbehaves, the NaN
enters through the loss and reaches the output head first.

Fix (fixed=True): the standard pipeline filter, dropping quotes whose IV inversion failed (non-
finite target) -- those quotes get weight 0 in the loss. Same model, optimiser, lr and otherwise
identical batches.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("implied-vol pipelines whose Black-Scholes inversion yields NaN for quotes below "
          "intrinsic (e.g. py_vollib / scipy brentq failures) feeding NaN targets to a model")


class ChainTransformer(nn.Module):
    def __init__(self, d_in, d_model, n_layers, n_heads):
        super().__init__()
        self.embed = nn.Linear(d_in, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 2 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, 1))

    def forward(self, quotes):
        return self.head(self.encoder(self.embed(quotes))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    d_model = [32, 24, 48][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    n_quotes = [24, 32, 20][seed % 3]
    batch = [16, 12, 20][seed % 3]
    lr = [1e-3, 1.5e-3, 8e-4][seed % 3]
    bad_step = [110, 75, 130][seed % 3]
    steps = 160

    def chain_batch(b):
        k = rng.uniform(-0.35, 0.25, size=(b, n_quotes))
        t = rng.choice([0.05, 0.1, 0.25, 0.5, 1.0], size=(b, n_quotes))
        atm = rng.uniform(0.12, 0.45, size=(b, 1))
        skew = rng.uniform(-0.5, -0.1, size=(b, 1))
        iv = atm + skew * k / np.sqrt(1 + 4 * t) + 0.4 * k ** 2 + 0.01 * rng.normal(size=k.shape)
        spread = 0.002 + 0.02 * np.abs(k) + 0.005 * rng.random(k.shape)
        vol_rank = rng.random(k.shape)
        is_put = (k < 0).astype(float)
        x = np.stack([k / 0.2, np.log(t), spread * 50, vol_rank, is_put,
                      np.repeat(atm, n_quotes, 1) * 3], -1)           # atm level as context
        return x, iv

    batches = []
    for s in range(steps):
        x, iv = chain_batch(batch)
        if s == bad_step:
            rows = rng.choice(batch, size=2, replace=False)
            for r in rows:
                cols = rng.choice(n_quotes, size=3, replace=False)
                iv[r, cols] = np.nan                     # mid below intrinsic -> inversion fails
        batches.append((torch.tensor(x, dtype=torch.float32), torch.tensor(iv, dtype=torch.float32)))

    model = ChainTransformer(6, d_model, n_layers, n_heads=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(pred, iv):
        if fixed:
            ok = torch.isfinite(iv)
            return ((pred - torch.nan_to_num(iv)) ** 2 * ok).sum() / ok.sum()
        return ((pred - iv) ** 2).mean()

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
