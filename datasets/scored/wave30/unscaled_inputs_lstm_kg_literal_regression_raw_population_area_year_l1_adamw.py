"""LSTM over an entity's numeric KG literals, regressing a missing numeric attribute.

Model: for a city entity the KG holds a sequence of (attribute, value) literals -- founding
year, area in km^2, elevation in m, number of districts, latitude, distance to the capital in km,
... An attribute-type embedding is concatenated with the value and read by an LSTM (`lstm`);
a Linear `head` regresses the city's population (KG completion for numeric literals).
Loss: L1; optimiser AdamW.

Mechanism: the literals and the target are fed as stored in the KG: values from ~1 to ~10^5 and
a target from ~10^3 to ~10^7. The large raw values drive the LSTM gates into saturation, and the
target is six orders of magnitude above what a freshly initialised regressor outputs: the L1
loss starts in the hundreds of thousands. AdamW moves each weight by ~lr per step, so the output
can only creep upwards; over the whole run the loss stays essentially at its initial value
(a stall without any non-finite value), while the standardised run learns the relation.

ORIGIN: `lstm` -- the first module that receives the unscaled literals; the target scale
problem shows at `head`, but the input side starts at the LSTM.

Fix: standardise inputs and target -- log1p the literals and z-score them per attribute type
(train statistics), and regress the z-scored log population. Same model, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "lstm"
SOURCE = ("LiteralE / KBLRN / MrAP-style numeric literal prediction on YAGO15k / FB15k-237 "
          "literals; the common pitfall of feeding raw literal values and raw targets to a "
          "neural regressor (loss in the 1e5-1e6 range that never moves)")

ATTRS = [  # (name, typical log-scale centre, spread)
    ("founding_year", math.log(1850.0), 0.05), ("area_km2", math.log(300.0), 1.2),
    ("elevation_m", math.log(250.0), 1.0), ("districts", math.log(12.0), 0.7),
    ("latitude", math.log(40.0), 0.3), ("dist_capital_km", math.log(200.0), 1.0),
    ("airports", math.log(2.0), 0.6), ("universities", math.log(5.0), 0.9),
]


class LiteralLSTM(nn.Module):
    def __init__(self, n_attr, d_attr, hidden):
        super().__init__()
        self.attr = nn.Embedding(n_attr, d_attr)
        self.lstm = nn.LSTM(d_attr + 1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, attr_ids, values):
        x = torch.cat([self.attr(attr_ids), values.unsqueeze(-1)], dim=-1)
        _, (h, _) = self.lstm(x)
        return self.head(h[-1]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d_attr = [8, 12, 16][seed % 3]
    hidden = [32, 48, 64][seed % 3]
    seq = [6, 8, 5][seed % 3]
    batch = [64, 48, 96][seed % 3]
    steps = [150, 170, 130][seed % 3]
    lr = [3e-3, 2e-3, 5e-3][seed % 3]

    n_attr = len(ATTRS)
    centre = torch.tensor([a[1] for a in ATTRS])
    spread = torch.tensor([a[2] for a in ATTRS])
    coef = torch.randn(n_attr, generator=g) * 0.6                  # effect on log population

    batches = []
    for _ in range(steps):
        ids = torch.stack([torch.randperm(n_attr, generator=g)[:seq] for _ in range(batch)])
        z = torch.randn(batch, seq, generator=g)                    # latent standardised log
        log_v = centre[ids] + spread[ids] * z
        noise = 0.2 * torch.randn(batch, generator=g)
        log_pop = math.log(50_000.0) + (coef[ids] * z).sum(1) + noise
        if fixed:
            values, target = z, (log_pop - math.log(50_000.0)) / 1.2
        else:
            values, target = torch.exp(log_v), torch.exp(log_pop)
        batches.append(((ids, values), target))

    model = LiteralLSTM(n_attr, d_attr, hidden)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
