"""Retail-bank customer model fed straight from the feature store: the monetary features come as
integer cents (account balance up to ~10^7, monthly income ~5*10^5, card spend ~10^5), alongside
tenure in days and age in years, and the model has a dict of heads {"spend": next-month card
spend, "default": logit}. Nobody added the standardisation step, and the spend target is also
regressed in raw cents. From step 0 the first layer's pre-activations are in the millions, the
spend head is off by ~10^5 and the MSE term is ~10^10, drowning the default head's BCE. The
first SGD (momentum 0.9) update multiplies an error of ~10^5 by inputs of ~10^7: the first-layer
weights jump by ~10^10, the next forward pass overflows and the loss is NaN from step 1. Fixed: inputs standardised with the
training-set mean/std and the spend target modelled in standardised units (z-scored with its
mean/std); model, loss form and optimiser unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = ("sklearn StandardScaler step omitted when moving a tabular model from GBDT (scale-free) to an "
          "MLP; raw currency-unit regression targets (common Kaggle/StackOverflow 'huge MSE loss' threads)")

N_FEAT = 7


class CustomerHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_FEAT, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.spend = nn.Linear(32, 1)
        self.default = nn.Linear(32, 1)

    def forward(self, x):
        h = self.encoder(x)
        return {"spend": self.spend(h).squeeze(-1), "default": self.default(h).squeeze(-1)}


def loss_fn(out, y):
    return F.mse_loss(out["spend"], y["spend"]) + F.binary_cross_entropy_with_logits(out["default"], y["default"])


def synth(g, n):
    z = torch.randn(n, 5, generator=g)
    income = (4e5 * torch.exp(0.4 * z[:, 0])).round()                       # cents / month
    balance = (income * 6 * torch.exp(0.8 * z[:, 1])).round()               # cents
    card_spend = (0.25 * income * torch.exp(0.3 * z[:, 2])).round()         # cents last month
    tenure = (1500 + 900 * z[:, 3]).clamp(30, 8000).round()                 # days
    age = (42 + 12 * z[:, 4]).clamp(18, 90).round()
    n_tx = (card_spend / 4000 * torch.exp(0.2 * torch.randn(n, generator=g))).round()
    late = (torch.rand(n, generator=g) < 0.1).float()
    x = torch.stack([balance, income, card_spend, tenure, age, n_tx, late], 1)
    spend_next = (0.8 * card_spend + 0.05 * income + 2e4 * torch.randn(n, generator=g)).clamp_min(0)
    risk = -0.8 * z[:, 0] - 0.6 * z[:, 1] + 1.5 * late - 1.0
    default = (torch.rand(n, generator=g) < torch.sigmoid(risk)).float()
    return x, spend_next, default


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CustomerHeads()
    steps, bs = 200, 64
    x_all, s_all, d_all = synth(g, steps * bs)
    if fixed:
        x_all = (x_all - x_all.mean(0)) / x_all.std(0)
        s_all = (s_all - s_all.mean()) / s_all.std()
    batches = []
    for i in range(steps):
        sl = slice(i * bs, (i + 1) * bs)
        batches.append((x_all[sl], {"spend": s_all[sl], "default": d_all[sl]}))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
