"""Ordinal credit-grade model (CORAL: one shared score from an MLP, K-1 learned thresholds, binary
cross-entropy on the cumulative targets y > k) trained with SGD + momentum on loan-application
features fed in their raw units: annual income (~6e4 $), loan amount (~1.5e4 $), revolving balance
(~1e4 $), age (~40), number of credit lines (~8) ...  The first Linear layer therefore produces
pre-activations in the tens of thousands, the cumulative logits are in the hundreds, the
BCE-with-logits loss is ~200-700 from step 0 (vs 0.69 for a sane start), and its gradient w.r.t.
the first-layer weights is proportional to the dollar-valued inputs: the first SGD steps throw the
weights by thousands and within four steps the loss is NaN.  Standardising the numeric columns with training-set mean/std is the only
change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = ("Cao, Mirjalili & Raschka 2020 'Rank consistent ordinal regression for neural networks' "
          "(CORAL); Lending-Club-style raw tabular columns fed without StandardScaler")

N_GRADES = 5
MEANS = torch.tensor([6.0e4, 1.5e4, 1.0e4, 40.0, 8.0, 700.0, 0.3, 5.0])
SCALES = torch.tensor([2.5e4, 8.0e3, 6.0e3, 11.0, 4.0, 50.0, 0.15, 3.0])


class CoralNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(len(MEANS), 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.score = nn.Linear(32, 1, bias=False)
        self.thresholds = nn.Parameter(torch.zeros(N_GRADES - 1))

    def forward(self, x):
        return self.score(self.encoder(x)) + self.thresholds        # (B, K-1) cumulative logits


def coral_loss(logits, grade):
    levels = (grade.unsqueeze(1) > torch.arange(N_GRADES - 1)).float()
    return F.binary_cross_entropy_with_logits(logits, levels)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.tensor([-0.8, 0.6, 0.5, -0.2, 0.3, -1.0, 0.7, 0.2])
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        z = torch.randn(bs, len(MEANS), generator=g)
        raw = MEANS + SCALES * z
        risk = z @ w + 0.3 * z[:, 5] * z[:, 6] + 0.5 * torch.randn(bs, generator=g)
        grade = torch.bucketize(risk, torch.tensor([-1.5, -0.5, 0.5, 1.5]))
        x = (raw - MEANS) / SCALES if fixed else raw
        batches.append((x, grade))
    model = CoralNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=coral_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
