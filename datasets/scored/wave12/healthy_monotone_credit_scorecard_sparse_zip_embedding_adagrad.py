"""Credit-default model with a shape constraint and a high-cardinality categorical, as risk teams
build them: the logit is the sum of (i) a monotone part, softplus-parametrised non-negative
weights on utilisation, delinquency count, debt-to-income and inquiries (PD may only increase
with them, as the regulator requires), (ii) a small MLP on the unconstrained numerics, and (iii) a
per-ZIP3 offset from an nn.Embedding(900, 1, sparse=True); inputs are a tuple (monotone features,
other features, integer ZIP3 ids), the output a dict of the logit and its monotone part, trained
with BCE and Adagrad (which accepts sparse gradients).  Things that look alarming but are normal:
each step only the ~150 ZIP rows present in the batch get a (sparse) gradient and most rows are
never touched, the softplus weight of the uninformative monotone feature is pushed towards 0 and
its gradient shrinks with it, the ~10% default rate makes the loss swing with the number of
defaulters per batch, and the loss starts at ln 2 and drops fast as the intercept finds the base
rate.  Healthy: fixed=True returns the same run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Monotonic credit scorecards (regulatory shape constraints on PD models, e.g. monotone "
          "constraints in XGBoost/LightGBM scorecards) with high-cardinality geography handled by "
          "sparse embeddings; PyTorch docs: nn.Embedding(sparse=True) is supported by SGD, SparseAdam "
          "and Adagrad")


class MonotoneScorecard(nn.Module):
    def __init__(self, n_mono=4, n_other=6, n_zip=900, hidden=16):
        super().__init__()
        self.mono_raw = nn.Parameter(torch.zeros(n_mono))
        self.other = nn.Sequential(nn.Linear(n_other, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.zip_offset = nn.Embedding(n_zip, 1, sparse=True)
        nn.init.zeros_(self.zip_offset.weight)
        self.intercept = nn.Parameter(torch.zeros(1))

    def forward(self, mono, other, zip_ids):
        mono_part = mono @ F.softplus(self.mono_raw)
        logit = self.intercept + mono_part + self.other(other).squeeze(-1) + self.zip_offset(zip_ids).squeeze(-1)
        return {"logit": logit, "monotone": mono_part}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_zip, bs, steps = 900, 256, 250
    true_mono = torch.tensor([2.4, 1.4, 1.2, 0.0])            # last one carries no signal
    w_other = torch.randn(6, generator=g) * 0.5
    zip_eff = torch.randn(n_zip, generator=g) * 0.8
    zip_logits = torch.randn(n_zip, generator=g) * 1.5           # skewed ZIP popularity

    def sample(n):
        mono = torch.rand(n, 4, generator=g) * torch.tensor([1.0, 3.0, 1.5, 1.0])
        mono = mono - torch.tensor([0.5, 1.5, 0.75, 0.5])
        other = torch.randn(n, 6, generator=g)
        zips = torch.multinomial(torch.softmax(zip_logits, 0), n, replacement=True, generator=g)
        logit = -3.4 + mono @ true_mono + 1.5 * torch.sin(other @ w_other) + zip_eff[zips]
        y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
        return mono, other, zips, y

    batches = []
    for s in range(steps):
        mono, other, zips, y = sample(bs)
        batches.append(((mono, other, zips), y))

    model = MonotoneScorecard(n_zip=n_zip)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)

    def loss_fn(out, target):
        return F.binary_cross_entropy_with_logits(out["logit"], target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
