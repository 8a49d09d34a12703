"""Court / pretrial risk: DeepSets over a defendant's charge history, sum-pooled into a tanh layer.

Domain: a pretrial-services analytics team predicts two-year re-arrest from the defendant's
record of prior events. Each event is a charge code (statute; Zipf-distributed, a few codes such
as failure-to-appear or possession dominate long records) plus numeric fields (severity, age at
the event, years since it, convicted or not). A permutation-invariant DeepSets model embeds each
event as phi(e) = ReLU(code_embedding + Linear(numeric)), sums over the (masked) events, and
feeds the pooled vector to rho = Linear -> Tanh -> Linear, trained with BCE-with-logits and
momentum SGD. (The usual pitfall of such data applies: the label is re-arrest, which measures
policing intensity as much as offending; here the concern is only whether the model trains.)

Mechanism: phi ends in a ReLU, so each event adds a non-negative vector of entries ~0.5, and
records hold 10-80 events. The summed vector has entries of order 10-30, and rho.0 maps it to
pre-activations with |x| ~ 10-30 for every defendant. tanh is flat there (derivative
~4 exp(-2|x|) < 1e-8): the tanh outputs are +-1 whatever the record, the gradient into rho.0,
the embeddings and phi vanishes, and only the output layer moves -- it can only fit the base
rate (and oscillates doing so). The loss stays at the label entropy or above, while the same
model with the pooled sum scaled to a unit range learns.

ORIGIN: "rho.1" -- the Tanh that receives the pooled sum; it is the unit that saturates and
where the backward signal dies.

Fix: scale the pooled sum by 1 / max_events (sum over the padded length divided by that length),
which keeps the count information but brings the tanh pre-activations to O(1); nothing else
changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "rho.1"
SOURCE = ("Zaheer et al. 2017 'Deep Sets' (sum pooling); pretrial risk assessment on criminal "
          "history records (e.g. PSA / COMPAS debates, Lum & Isaac 2016 on arrest-based labels); "
          "tanh saturation under large pre-activations (LeCun et al. 'Efficient BackProp')")


class ChargeHistoryDeepSets(nn.Module):
    def __init__(self, n_codes, d_num, hidden, max_events, fixed):
        super().__init__()
        self.code_emb = nn.Embedding(n_codes, hidden)       # statute / charge code
        self.num = nn.Linear(d_num, hidden)                 # severity, age, recency, disposition
        self.phi = nn.ReLU()
        self.rho = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.scale = 1.0 / max_events if fixed else 1.0

    def forward(self, codes, num, mask):
        h = self.phi(self.code_emb(codes) + self.num(num)) * mask.unsqueeze(-1)
        pooled = h.sum(1) * self.scale
        return self.rho(pooled).squeeze(-1)


def _defendants(g, n, max_ev, n_codes):
    counts = torch.randint(10, max_ev + 1, (n,), generator=g)
    mask = (torch.arange(max_ev)[None, :] < counts[:, None]).float()
    # charge codes are Zipf-like: a few (FTA, possession, DUI, theft) dominate long records
    probs = 1.0 / torch.arange(1, n_codes + 1).float()
    codes = torch.multinomial(probs / probs.sum(), n * max_ev, replacement=True, generator=g).view(n, max_ev)
    violent = (codes % 5 == 1).float()
    severity = torch.randn(n, max_ev, generator=g) + violent
    years_since = 10 * torch.rand(n, max_ev, generator=g)
    age_at = 18 + 30 * torch.rand(n, 1, generator=g) + torch.zeros(n, max_ev)
    convicted = (torch.rand(n, max_ev, generator=g) < 0.6).float()
    num = torch.stack([severity, (age_at - 33) / 9, (years_since - 5) / 3, convicted], -1)
    recent_violent = (violent * (1.0 + convicted) * mask).sum(1)
    rv = (recent_violent - recent_violent.mean()) / (recent_violent.std() + 1e-6)
    logit = 3.0 * rv - 1.0 * (age_at[:, 0] - 33) / 9
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return (codes, num, mask), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 24][seed % 3]
    max_ev = [60, 80, 50][seed % 3]
    batch = [64, 48, 80][seed % 3]
    lr = [0.3, 0.25, 0.35][seed % 3]
    steps = 150
    n_codes = [40, 60, 50][seed % 3]
    batches = [_defendants(g, batch, max_ev, n_codes) for _ in range(steps)]
    model = ChargeHistoryDeepSets(n_codes, 4, hidden, max_ev, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
