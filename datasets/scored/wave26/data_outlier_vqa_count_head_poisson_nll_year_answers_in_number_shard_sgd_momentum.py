"""Counting head for VQA ("how many <category>?") over bottom-up region features: each region is
fused with the question embedding (ReLU), averaged over regions and mapped to a log-rate; trained with
Poisson NLL (log_input=True, full=True) and SGD with momentum.

Mechanism: the counting split was built by keeping every VQA answer of type "number".  One early
shard contains questions whose numeric answers are years / populations ("what year ..." /
"how many people live here?" -> 1998, 2012, 1500 ...), i.e. a quarter of its rows have targets in
the thousands.  The Poisson gradient exp(r) - y of those rows is ~1000x the normal one, the SGD step
on that batch (amplified again by momentum on the next ones) throws the log-rate head to values
where exp(r) overflows: the loss becomes inf/NaN a few steps after the bad batch.

ORIGIN: None -- the failure starts in the data (one batch), not in a module; the bad targets hit
every parameter through the shared log-rate at once.

Fix: filter the shard the way counting datasets (HowMany-QA) do -- drop rows whose count answer is
above 20; the batch keeps its other rows, nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("VQA v2 'number' answers include years and large quantities; Trott et al. 2018 "
          "'Interpretable Counting for VQA' (HowMany-QA keeps counts 0-20); Poisson regression "
          "blow-ups from a few huge count targets (exp link overflow)")


class CountHead(nn.Module):
    def __init__(self, d_reg, n_cat, h):
        super().__init__()
        self.q_emb = nn.Embedding(n_cat, h)
        self.v_proj = nn.Linear(d_reg, h)
        self.fuse = nn.Sequential(nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.out = nn.Linear(h, 1)

    def forward(self, regions, q):
        f = self.v_proj(regions) + self.q_emb(q)[:, None, :]     # (B, R, h)
        pooled = self.fuse(f).mean(1)
        return self.out(pooled).squeeze(-1)                       # log-rate


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 48, 96][seed % 3]
    bs = [64, 48, 80][seed % 3]
    lr = [0.01, 0.02, 0.015][seed % 3]
    bad_step = [37, 81, 122][seed % 3]
    n_cat, R, d_reg, steps = 4, 24, 16, 160
    cat_vec = torch.randn(n_cat, d_reg, generator=g)
    batches = []
    for t in range(steps):
        cats = torch.randint(0, n_cat, (bs, R), generator=g)
        crowd = torch.rand(bs, 1, generator=g)           # empty street ... crowded market
        present = torch.rand(bs, R, generator=g) < crowd
        regions = cat_vec[cats] * present[..., None] + 0.3 * torch.randn(bs, R, d_reg, generator=g)
        q = torch.randint(0, n_cat, (bs,), generator=g)
        y = ((cats == q[:, None]) & present).sum(1).float()
        if t == bad_step:
            bad = torch.rand(bs, generator=g) < 0.25
            y = torch.where(bad, torch.randint(1500, 2021, (bs,), generator=g).float(), y)
            if fixed:
                keep = y <= 20
                regions, q, y = regions[keep], q[keep], y[keep]
        batches.append(((regions, q), y))
    torch.manual_seed(seed)
    model = CountHead(d_reg, n_cat, h)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.PoissonNLLLoss(log_input=True, full=True),
                batches=batches, steps=steps)
