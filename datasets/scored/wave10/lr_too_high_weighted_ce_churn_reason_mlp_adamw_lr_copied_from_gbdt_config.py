"""A team replaces its LightGBM multiclass model for churn reasons (objective="multiclass",
learning_rate=0.1, class_weight="balanced") with a small GELU MLP over the same feature-store
features and keeps the config: `learning_rate: 0.1` goes straight into AdamW and the "balanced"
class weights (n / (k * n_c), up to ~8 for the rarest reason) into the cross-entropy. For
gradient boosting 0.1 is a shrinkage factor on each tree; for Adam it is the per-step change of
every weight, ~100x what this network tolerates. Every step moves every weight by ~0.1,
so the logits swing from one confidently wrong configuration to another (the classes overlap,
so there is no easy fit to stumble into) and the weighted loss ends about where it started,
often above; it stays finite. Fixed: lr = 1e-3 (the usual Adam default); loss, class weights,
model and data are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("LightGBM learning_rate=0.1 / class_weight='balanced' configs carried over to a neural model "
          "(GBDT shrinkage vs Adam step size); sklearn compute_class_weight('balanced')")

N_FEAT, N_CLS = 20, 5
CLASS_FREQ = torch.tensor([0.55, 0.25, 0.1, 0.065, 0.035])


class ReasonMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_FEAT, 128), nn.GELU(), nn.Linear(128, 64), nn.GELU(),
                                 nn.Linear(64, N_CLS))

    def forward(self, x):
        return self.net(x)


CLASS_WEIGHT = 1.0 / (N_CLS * CLASS_FREQ)


def loss_fn(logits, y):
    return F.cross_entropy(logits, y, weight=CLASS_WEIGHT)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ReasonMLP()
    proto = torch.randn(N_CLS, N_FEAT, generator=g) * 0.3
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        y = torch.multinomial(CLASS_FREQ, bs, replacement=True, generator=g)
        x = proto[y] + torch.randn(bs, N_FEAT, generator=g)
        batches.append((x, y))
    config = {"learning_rate": 1e-3 if fixed else 0.1, "weight_decay": 1e-4}
    opt = torch.optim.AdamW(model.parameters(), lr=config["learning_rate"], weight_decay=config["weight_decay"])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
