"""Discrete-time survival model (DeepHit-style single-risk PMF head) for time-to-churn on
standardised customer features: a 2-hidden-layer ReLU MLP outputs logits over 20 monthly bins; the
likelihood uses log p(T = t) for observed events and log P(T > t) (a logsumexp over later bins) for
right-censored customers. The optimiser is SGD + momentum 0.9 with lr=3.0, taken from the team's
linear (logistic-hazard) baseline, which tolerated it. In the MLP the first few oversized updates
overshoot back and forth; the second hidden layer only sees non-negative ReLU outputs, so each
overshooting step moves all of a unit's incoming weights and bias the same way and shifts its
pre-activation down for every customer at once. Within a few dozen steps nearly every fc2 unit is negative
on all inputs, its gradient is exactly zero, and the head is left with a constant: the model
predicts the marginal time-to-churn distribution for everybody and the NLL plateaus at its starting
level. No NaN, no explosion. Fix: lr=0.05 (same optimiser and model)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "fc2"
SOURCE = ("Lee et al. 2018 DeepHit / discrete-time survival PMF heads (pycox); dying ReLU under an "
          "SGD learning rate carried over from a linear baseline")

K = 20


class SurvivalMLP(nn.Module):
    def __init__(self, d, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, K)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        return self.out(h)


def censored_pmf_nll(logits, y):
    t, event = y
    logp = torch.log_softmax(logits, dim=-1)
    ll_event = logp.gather(1, t.unsqueeze(1)).squeeze(1)
    later = torch.arange(K).unsqueeze(0) > t.unsqueeze(1)
    ll_surv = torch.logsumexp(logp.masked_fill(~later, float("-inf")), dim=-1)
    ll_surv = torch.where(t == K - 1, torch.zeros_like(ll_surv), ll_surv)   # censored at horizon
    return -torch.where(event > 0, ll_event, ll_surv).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, n, bs, steps = 16, 8192, 256, 200
    X = torch.randn(n, d, generator=g)
    w = torch.randn(d, generator=g) / d ** 0.5
    risk = X @ w + 0.5 * torch.tanh(X[:, 0] * X[:, 1])
    u = torch.sigmoid(1.7 * risk + 0.4 * torch.randn(n, generator=g))
    t_event = (u * K).long().clamp(0, K - 1)
    t_censor = torch.randint(0, K, (n,), generator=g)
    event = (t_event <= t_censor).float()
    t_obs = torch.minimum(t_event, t_censor)
    model = SurvivalMLP(d)
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 3.0, momentum=0.9)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((X[idx], (t_obs[idx], event[idx])))
    return dict(model=model, optimizer=opt, loss_fn=censored_pmf_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
