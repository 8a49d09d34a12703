"""Set Transformer (Lee et al. 2019: two SAB blocks built from nn.MultiheadAttention
and a PMA pooling-by-attention with a learned seed vector) regressing a permutation-
invariant statistic of a point set, trained with Adam and a MultiStepLR schedule
(stepped per iteration through an optimizer step post-hook).

Mechanism: MultiStepLR was written with gamma=10 instead of gamma=0.1. The first
phase at lr=1e-3 trains normally, then each milestone multiplies the lr by 10 (1e-2,
then 1e-1). At 1e-1 Adam moves every weight by ~0.1 per step: attention logits and
LayerNorm gains overshoot, the predictions jump around and the loss climbs back
above its initial value (update/weight ratios ~1e-1).

ORIGIN: None - the optimiser's schedule, not a module.

Fix: gamma=0.1.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Lee et al. 2019 Set Transformer (SAB/PMA); MultiStepLR gamma typo (10 vs 0.1) "
          "reported in 'loss explodes after milestone' forum threads.")


class SAB(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.ff(x))


class PMA(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.seed = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)

    def forward(self, x):
        s = self.seed.expand(x.shape[0], -1, -1)
        return self.attn(s, x, x, need_weights=False)[0].squeeze(1)


class SetTransformer(nn.Module):
    def __init__(self, d_in, d, heads, n_sab):
        super().__init__()
        self.embed = nn.Linear(d_in, d)
        self.sabs = nn.Sequential(*[SAB(d, heads) for _ in range(n_sab)])
        self.pool = PMA(d, heads)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.pool(self.sabs(self.embed(x)))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, heads=4, n_sab=2, n=10, bs=32, steps=90, ms=[30, 55]),
           dict(d=32, heads=2, n_sab=2, n=12, bs=32, steps=90, ms=[30, 55]),
           dict(d=32, heads=4, n_sab=2, n=8, bs=24, steps=100, ms=[35, 60])][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(555 + seed)
    model = SetTransformer(2, cfg["d"], cfg["heads"], cfg["n_sab"])
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randn(cfg["bs"], cfg["n"], 2, generator=g)
        y = 3.0 * (x.norm(dim=-1).mean(1) - 1.25)          # mean radius of the set
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=cfg["ms"], gamma=0.1 if fixed else 10.0)
    opt.register_step_post_hook(lambda *_: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"])
