"""Discrete-time survival model (person-period logistic hazard, Singer & Willett / Tutz & Schmid)
for customer attrition over 24 monthly periods.  Each subject's covariates go through an MLP, a
month embedding adds the baseline hazard, and the model emits a hazard logit for every month;
inputs are a tuple (covariates, at-risk mask) and the target is the event indicator per month.
The loss is the Bernoulli NLL SUMMED over all at-risk person-months of the batch (the standard
likelihood, not a mean), so its size depends on how much follow-up the 64 sampled customers
contribute (roughly 350 to 700 person-months per batch): the loss is in the hundreds, jumps by up
to +-40% between consecutive steps for no reason other than censoring, and the untrained hazard of
0.5 per month makes the first losses several times larger than the final ones.  None of this is a failure: the per-person-month NLL falls steadily from
0.69 towards the entropy of the true monthly hazard (~0.15) and the summed loss falls with it.
Healthy: fixed=True returns the same run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Singer & Willett 1993 / Tutz & Schmid 2016 discrete-time hazard models fitted on the "
          "person-period data set; Gensheimer & Narasimhan 2019 (nnet-survival) summed "
          "per-interval likelihood with censoring masks")

T = 24


class DiscreteHazardNet(nn.Module):
    def __init__(self, n_feat=8, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.risk = nn.Linear(hidden, 1)
        self.month = nn.Embedding(T, 1)
        nn.init.zeros_(self.month.weight)

    def forward(self, x, at_risk):
        r = self.risk(self.encoder(x))                          # (B, 1)
        base = self.month.weight.view(1, T)                     # (1, T) baseline log-odds
        logits = r + base
        return {"logits": logits, "at_risk": at_risk}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, bs, steps = 8, 64, 200
    beta = torch.randn(n_feat, generator=g) * 0.5
    base_logit = -3.0 + 0.6 * torch.sin(torch.arange(T) / 4.0)

    def sample(n):
        x = torch.randn(n, n_feat, generator=g)
        lin = x @ beta + 0.5 * torch.tanh(x[:, 0] * x[:, 1])
        haz = torch.sigmoid(base_logit.view(1, T) + lin.view(-1, 1))
        ev = torch.rand(n, T, generator=g) < haz
        first = torch.where(ev.any(1), ev.float().argmax(1), torch.full((n,), T))      # event month
        censor = torch.randint(2, T + 1, (n,), generator=g)                            # drop-out month
        t_end = torch.minimum(first + 1, censor)
        months = torch.arange(T).view(1, T)
        at_risk = (months < t_end.view(-1, 1)).float()
        y = ((months == first.view(-1, 1)) & (first.view(-1, 1) < censor.view(-1, 1))).float()
        return x, at_risk, y

    batches = []
    for s in range(steps):
        x, m, y = sample(bs)
        batches.append(((x, m), y))

    model = DiscreteHazardNet(n_feat)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(out, target):
        nll = F.binary_cross_entropy_with_logits(out["logits"], target, reduction="none")
        return (nll * out["at_risk"]).sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
