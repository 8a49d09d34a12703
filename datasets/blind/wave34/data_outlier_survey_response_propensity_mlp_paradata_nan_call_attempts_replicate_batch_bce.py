"""Response-propensity model for a household survey (nonresponse adjustment): sampling-frame
covariates (standardised area deprivation, dwelling type, urbanicity, age of reference person
from the register ...) plus CATI/CAPI paradata (log call attempts, share of evening calls,
interviewer-observed condition) -> MLP -> logit of responding; BCE-with-logits, AdamW.

Mechanism (data_outlier). Paradata arrive per sample replicate from the case-management
system. One replicate's export lost its contact-history file, so its call-attempt columns are
NaN (read as empty cells) instead of counts. Everything else in the run is ordinary. The
mini-batch drawn from that replicate (its step varies with the seed) carries NaN into the first
Linear; the logits and the BCE loss become NaN at that step and AdamW writes NaN into every
weight, so every later loss is NaN too.

ORIGIN = "net.0": the first Linear is the first module the corrupt batch hits (NaN times any
weight is NaN); nothing in the model is at fault.

Fix: clean that batch the way the survey team does for missing paradata: impute the missing
call-history cells with the column median of the good data (and keep the rows). Same model,
optimiser, batches otherwise.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Missing/NaN paradata in response-propensity models (Kreuter et al. 2010, 'Using "
          "proxy measures and other correlates of survey outcomes to adjust for non-response'); "
          "PyTorch forum 'loss becomes nan after some iterations' traced to NaN in one batch")


class PropensityNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 1e-3, 2e-3][seed % 3]
    bs = [128, 256, 192][seed % 3]
    steps = 150
    bad_step = [37, 81, 112][seed % 3]
    n_frame, n_para = 10, 4
    D = n_frame + n_para

    model = PropensityNet(D, width, depth)

    w = torch.randn(D, generator=g) * 0.6
    w[n_frame] = -0.9          # many call attempts -> low propensity
    def sample(n):
        x = torch.randn(n, D, generator=g)
        logit = x @ w + 0.7 * torch.tanh(x[:, 0] * x[:, 1]) - 0.2
        y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
        return x, y

    batches = [sample(bs) for _ in range(steps)]
    med = torch.cat([b[0] for b in batches[:bad_step]]).median(0).values
    x, y = batches[bad_step]
    x = x.clone()
    x[:, n_frame:n_frame + 2] = float("nan")     # lost contact-history export
    if fixed:
        x = torch.where(torch.isnan(x), med.expand_as(x), x)
    batches[bad_step] = (x, y)

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
