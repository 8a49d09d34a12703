"""Pre-norm transformer encoder that forecasts a load value from a window of sensor
readings; the model returns a dict {"pred", "pooled"} and the loss reads out["pred"].

Mechanism: one early batch contains rows whose target is the logger's missing-value
sentinel (-9999) in a target column standardised to ~N(0,1). That single step's
gradient is ~1e4 times the normal one. Adam's update is bounded, so nothing
overflows, but the squared gradient poisons the second-moment estimate v: with
beta2=0.999 it decays over thousands of steps, so every later update is
~lr * g / (0.1 * G_spike) - four orders too small. The spike step itself and the
~20 momentum-carried steps after it push every weight by ~lr in the spike's
direction (the prediction is dragged towards -9999), and the poisoned v then keeps
the model from coming back: the loss stays above its initial level for the rest of
the run while the clean run converges.

ORIGIN: None - a corrupt batch, not a module.

Fix: drop the sentinel rows (replace them by valid targets) in that batch; the rest
of the data, the model and Adam are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Missing-value sentinels (-9999) left in regression targets; Adam second-moment "
          "poisoning after a gradient spike (discussed in 'Adam stops learning after one "
          "bad batch' forum threads and the Adafactor/AdamW update-clipping motivation).")


class Forecaster(nn.Module):
    def __init__(self, n_feat, d, n_layers, seq):
        super().__init__()
        self.proj = nn.Linear(n_feat, d)
        self.pos = nn.Parameter(torch.zeros(1, seq, d))
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        h = self.encoder(self.proj(x) + self.pos)
        pooled = self.norm(h.mean(1))
        return {"pred": self.head(pooled).squeeze(-1), "pooled": pooled}


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, L=2, bs=32, lr=1e-3, bad=2, steps=80),
           dict(d=24, L=1, bs=48, lr=2e-3, bad=1, steps=90),
           dict(d=32, L=2, bs=24, lr=2e-3, bad=3, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    n_feat, seq = 5, 8
    model = Forecaster(n_feat, cfg["d"], cfg["L"], seq)
    w = torch.randn(n_feat, generator=g)
    batches = []
    for s in range(cfg["steps"]):
        x = torch.randn(cfg["bs"], seq, n_feat, generator=g)
        y = torch.tanh(x[:, -3:, :] @ w).mean(1) * 2.0 + 0.1 * torch.randn(cfg["bs"], generator=g)
        if s == cfg["bad"] and not fixed:
            y[: cfg["bs"] // 4] = -9999.0                    # logger missing-value sentinel
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: nn.functional.mse_loss(out["pred"], y),
                batches=batches, steps=cfg["steps"])
