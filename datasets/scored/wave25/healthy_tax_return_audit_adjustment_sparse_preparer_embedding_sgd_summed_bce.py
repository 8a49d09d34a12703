"""Tax administration: audit-outcome model with sparse preparer / ZIP embeddings and a summed BCE.

Domain: a revenue agency's risk unit scores individual returns for the probability that an
examination ends with an adjustment (additional tax owed). Inputs: standardised return fields
(log AGI, deduction-to-income ratio, Schedule C flag and profit ratio, refundable credits
claimed, refund size, cash-business NAICS flag) plus two high-cardinality IDs: the paid
preparer's PTIN and the ZIP3 of the filer. Preparer behaviour matters a lot ("ghost" or
credit-mill preparers), so each ID gets an nn.Embedding(sparse=True), and the whole model is
trained with plain SGD (which supports sparse gradients) on BCE-with-logits with
reduction='sum', the learning rate scaled down accordingly.

Why it looks alarming but is healthy:
  * the loss is a sum over 128-256 returns, so it starts at ~85-180 and ends at ~40-95 --
    large numbers that are simply the batch size times a normal per-example BCE;
  * the embedding gradients are sparse: on any step only the ~90-150 preparer rows (out of
    400-600) and the ZIP3 rows present in the batch get a gradient; every other row has an
    exactly-zero gradient, and low-volume preparers go untouched for many consecutive steps;
  * the positive rate is ~20 %, so the loss drops fast at first (learning the base rate) and
    then keeps improving more slowly as return-field and preparer effects are learned.

ORIGIN: None -- healthy run.

Fix: none needed (fixed=True builds the identical run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Audit selection / compliance risk scoring (e.g. IRS DIF-style scoring, OECD Tax "
          "Administration reports on paid-preparer compliance); torch.nn.Embedding(sparse=True) "
          "with optim.SGD (PyTorch docs: sparse gradients); sum-reduced losses")


class AuditScorer(nn.Module):
    def __init__(self, n_prep, n_zip, d_num, d_emb, width):
        super().__init__()
        self.prep = nn.Embedding(n_prep, d_emb, sparse=True)
        self.zip3 = nn.Embedding(n_zip, d_emb, sparse=True)
        self.mlp = nn.Sequential(nn.Linear(d_num + 2 * d_emb, width), nn.ReLU(),
                                 nn.Linear(width, width // 2), nn.ReLU(), nn.Linear(width // 2, 1))

    def forward(self, num, prep_id, zip_id):
        z = torch.cat([num, self.prep(prep_id), self.zip3(zip_id)], -1)
        return self.mlp(z).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_prep = [400, 600, 500][seed % 3]
    n_zip = [80, 120, 100][seed % 3]
    d_emb = [8, 12, 16][seed % 3]
    width = [64, 96, 128][seed % 3]
    batch = [128, 192, 256][seed % 3]
    lr = [1.5e-3, 1e-3, 8e-4][seed % 3]
    d_num, steps = 7, 200

    prep_risk = torch.where(torch.rand(n_prep, generator=g) < 0.08,
                            2.5 + 0.5 * torch.randn(n_prep, generator=g),
                            0.3 * torch.randn(n_prep, generator=g))
    zip_risk = 0.4 * torch.randn(n_zip, generator=g)
    prep_pop = torch.distributions.Dirichlet(torch.full((n_prep,), 0.5)).sample()   # skewed volume
    batches = []
    for _ in range(steps):
        num = torch.randn(batch, d_num, generator=g)
        p = torch.multinomial(prep_pop, batch, replacement=True, generator=g)
        z = torch.randint(0, n_zip, (batch,), generator=g)
        logit = (-3.0 + 2.0 * num[:, 1] + 1.5 * num[:, 2] * (num[:, 3] > 0).float()
                 + 1.2 * num[:, 4] + 1.5 * prep_risk[p] + zip_risk[z])
        y = (torch.rand(batch, generator=g) < torch.sigmoid(logit)).float()
        batches.append(((num, p, z), y))
    model = AuditScorer(n_prep, n_zip, d_num, d_emb, width)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(reduction="sum"),
                batches=batches, steps=steps)
