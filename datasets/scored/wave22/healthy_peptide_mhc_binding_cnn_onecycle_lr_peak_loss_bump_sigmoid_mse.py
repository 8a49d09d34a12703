"""Healthy: peptide-MHC class I binding CNN, one-cycle LR schedule with a loss bump at the peak.

What looks alarming but is fine: (1) the learning rate is driven by a one-cycle schedule
(stepped from an optimizer step hook) that ramps up to a peak 10x the base lr; around the peak
the loss stops falling and bounces up noticeably, then drops again during annealing; (2) the
target is the NetMHC-style transformed affinity 1 - log(IC50)/log(50000) in [0, 1], predicted
through a sigmoid and trained with MSE, so the loss values are small (~0.01-0.08) from the
start; (3) most peptides are non-binders, so most targets sit near 0.1 and many sigmoid
outputs are pushed towards the low end. The run converges.

ORIGIN: None (healthy run).
Fix: none needed -- ``fixed=True`` builds the identical run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("NetMHC / NetMHCpan-style binding-affinity regression (log-transformed IC50, sigmoid "
          "output, MSE) with a CNN over peptide + MHC pseudo-sequence; fast.ai/Smith one-cycle "
          "learning-rate policy.")

AA = 20


class PepMHC(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pep = nn.Sequential(nn.Conv1d(AA, c, 3, padding=1), nn.ReLU(), nn.Conv1d(c, c, 3, padding=1), nn.ReLU())
        self.mhc = nn.Sequential(nn.Conv1d(AA, c, 5, padding=2), nn.ReLU(), nn.Conv1d(c, c, 5, padding=2), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(2 * c * 2, 64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid())

    def forward(self, pep, mhc):
        p, m = self.pep(pep), self.mhc(mhc)
        z = torch.cat([p.amax(-1), p.mean(-1), m.amax(-1), m.mean(-1)], 1)
        return self.head(z).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [32, 24, 40][seed % 3]
    base_lr = [1e-3, 1.5e-3, 1e-3][seed % 3]
    bsz = [64, 96, 64][seed % 3]
    steps = 200
    n_alleles = 6
    alleles = torch.randint(0, AA, (n_alleles, 34), generator=g)
    # allele-specific anchor preferences at peptide positions 2 and 9
    anchor2 = torch.randint(0, AA, (n_alleles, 2), generator=g)
    anchor9 = torch.randint(0, AA, (n_alleles, 2), generator=g)

    def oh(t):
        return torch.nn.functional.one_hot(t, AA).float().transpose(1, 2)

    def make_batch():
        a = torch.randint(0, n_alleles, (bsz,), generator=g)
        pep = torch.randint(0, AA, (bsz, 9), generator=g)
        binder = torch.rand(bsz, generator=g) < 0.3
        pick = torch.randint(0, 2, (bsz,), generator=g)
        pep[binder, 1] = anchor2[a, pick][binder]
        pep[binder, 8] = anchor9[a, 1 - pick][binder]
        m2 = (pep[:, 1:2] == anchor2[a]).any(1).float()
        m9 = (pep[:, 8:9] == anchor9[a]).any(1).float()
        log_ic50 = math.log(50000) - (2.5 * m2 + 2.5 * m9 + 0.5 * torch.randn(bsz, generator=g)) - 0.3
        y = (1 - log_ic50 / math.log(50000)).clamp(0, 1)
        return (oh(pep), oh(alleles[a])), y

    batches = [make_batch() for _ in range(steps)]
    model = PepMHC(c)
    opt = torch.optim.Adam(model.parameters(), lr=base_lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=10 * base_lr, total_steps=steps + 1,
                                                pct_start=0.3, div_factor=10.0, final_div_factor=100.0)
    opt.register_step_post_hook(lambda *_: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
