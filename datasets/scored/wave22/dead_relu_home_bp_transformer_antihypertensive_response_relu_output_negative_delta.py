"""Antihypertensive dose-response model on home/wearable BP readings with a ReLU output head.

Mechanism: a small Transformer encoder reads 14 days of home blood-pressure-cuff / wearable
readings (SBP, DBP, HR, dose, adherence per day, standardised) and predicts the change in SBP
and DBP after four weeks on the new dose, in units of 10 mmHg. The regression head was copied
from the team's absolute-BP model and still ends in a ReLU ("pressures are positive"), but the
target is a *change*, negative for almost every patient on a treatment (~-12 / -6 mmHg). The
head starts near zero (small last-layer init); every sample with a positive output is pushed
down; within a few dozen steps both output units are
<= 0 for every patient, the outputs are exactly 0, no gradient reaches any parameter, and the
loss freezes at mean(delta^2).

ORIGIN: ``out_act`` -- the ReLU on the two regression outputs, the units that die.

Fix: drop the output ReLU (identity output for a signed target); architecture, data and
optimiser otherwise identical.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("Home BP telemonitoring / wearable cuffless BP dose-titration models; common forum bug "
          "'regression model always predicts 0' when a final ReLU meant for positive targets "
          "is kept for a target that can be negative (BP change after treatment).")


class BPResponseTransformer(nn.Module):
    def __init__(self, n_feat, d, n_layers, identity_out):
        super().__init__()
        self.embed = nn.Linear(n_feat, d)
        self.pos = nn.Parameter(torch.randn(14, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, 2)
        self.out_act = nn.Identity() if identity_out else nn.ReLU()
        nn.init.normal_(self.head.weight, std=1e-3)  # near-zero last layer: start from "no change"
        nn.init.zeros_(self.head.bias)

    def forward(self, x):
        h = self.encoder(self.embed(x) + self.pos)
        return self.out_act(self.head(h.mean(1)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 32][seed % 3]
    n_layers = [2, 1, 3][seed % 3]
    lr = [3e-4, 5e-4, 3e-4][seed % 3]
    bsz = [64, 48, 64][seed % 3]
    steps = 150
    days = 14

    def make_batch():
        base_sbp = 150 + 12 * torch.randn(bsz, 1, generator=g)
        base_dbp = 92 + 7 * torch.randn(bsz, 1, generator=g)
        dose = torch.randint(1, 5, (bsz, 1), generator=g).float()           # dose level (e.g. 5-20 mg)
        adher = torch.rand(bsz, 1, generator=g) * 0.5 + 0.5
        sens = torch.rand(bsz, 1, generator=g)                                # individual drug sensitivity
        trend = torch.linspace(0, 1, days)[None]
        sbp = base_sbp - 4 * sens * dose * trend * adher + 5 * torch.randn(bsz, days, generator=g)
        dbp = base_dbp - 2 * sens * dose * trend * adher + 3 * torch.randn(bsz, days, generator=g)
        hr = 72 + 8 * torch.randn(bsz, days, generator=g)
        x = torch.stack([(sbp - 150) / 12, (dbp - 92) / 7, (hr - 72) / 8,
                         ((dose - 2.5) / 1.1).expand(-1, days),
                         (adher + 0.05 * torch.randn(bsz, days, generator=g) - 0.75) / 0.15], -1)
        d_sbp = -(4 + 4 * sens * dose * adher) + 2 * torch.randn(bsz, 1, generator=g)
        d_dbp = -(2 + 2 * sens * dose * adher) + 1.5 * torch.randn(bsz, 1, generator=g)
        return x, torch.cat([d_sbp, d_dbp], 1) / 10.0

    batches = [make_batch() for _ in range(steps)]
    model = BPResponseTransformer(5, d, n_layers, identity_out=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
