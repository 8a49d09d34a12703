"""Deep ensemble of ReLU MLP text classifiers whose ReLUs die from a doubly-scaled lr.

Mechanism: M independent members are trained jointly (Lakshminarayanan et al. 2017 style,
one optimizer over an nn.ModuleList).  The user sums the members' cross-entropies, so each
member already receives its full single-model gradient, and then also applies the linear
lr-scaling rule "effective batch is M x B, so lr = M x base_lr".  Each member is thus
trained with plain SGD at M times its tuned lr.  The inputs are non-negative term
frequencies, so every weight of a first-layer unit receives a gradient of the same sign:
the first overshooting updates shove whole rows of the first Linear (and their biases)
negative and the first ReLU of almost every member goes silent for every document.  The
summed loss returns to ~M*log(C) and stays there.

ORIGIN is None: the failure is an optimisation hyper-parameter applied to every member at
once; no single module starts it (the dead units are the first ReLU of all members).

Fix: keep the tuned base lr for the summed loss (or average the losses and scale the lr).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = None
SOURCE = ("Lakshminarayanan et al. 2017 'Simple and Scalable Predictive Uncertainty "
          "Estimation using Deep Ensembles'; Goyal et al. 2017 linear lr scaling rule "
          "misapplied to independent ensemble members")


def make_member(d_in, hidden, n_classes):
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, n_classes))


class DeepEnsemble(nn.Module):
    def __init__(self, n_members, d_in, hidden, n_classes):
        super().__init__()
        self.members = nn.ModuleList(make_member(d_in, hidden, n_classes)
                                     for _ in range(n_members))

    def forward(self, x):
        return torch.stack([m(x) for m in self.members])  # (M, B, C)


def ensemble_loss(logits, y):
    # each member is trained on its own NLL; summed so every member gets its full gradient
    return sum(F.cross_entropy(member_logits, y) for member_logits in logits)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(M=8, hidden=64, bs=64, base_lr=0.5, steps=100),
           dict(M=10, hidden=96, bs=128, base_lr=0.4, steps=90),
           dict(M=6, hidden=48, bs=32, base_lr=0.6, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab, n_classes = 64, 8
    topics = torch.rand(n_classes, vocab, generator=g) ** 3
    topics = topics / topics.sum(1, keepdim=True) * vocab / n_classes
    model = DeepEnsemble(cfg["M"], vocab, cfg["hidden"], n_classes)
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_classes, (cfg["bs"],), generator=g)
        counts = torch.poisson(topics[y] * 20, generator=g)
        tf = counts / counts.sum(1, keepdim=True).clamp_min(1) * 10  # term frequencies
        batches.append((tf, y))
    lr = cfg["base_lr"] if fixed else cfg["base_lr"] * cfg["M"]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=ensemble_loss, batches=batches,
                steps=cfg["steps"])
