"""Protein solubility classifier (soluble / insoluble on E. coli over-expression) from
amino-acid and dipeptide composition (20 + 400 non-negative frequency features, scaled to
percent as in composition-based predictors), a 2-3 hidden-layer ReLU MLP, BCE-with-logits,
SGD with Nesterov momentum.

Mechanism (dead_relu): every input feature is non-negative and the vector is far from
centred, so for a first-layer unit the SGD step on its weight vector is delta * x with x in
the same (positive) orthant for every example: one step moves w.x by lr * delta * |x|^2,
the same sign for every protein. With the learning rate of the group's standardised-
feature baseline (0.2-0.3), the first few steps throw the units whose delta is positive so
far below zero that they are negative for every protein; a unit negative on all inputs gets
no gradient and never recovers. Within ~20 steps the first hidden layer is completely
dead, the output is a constant logit and the BCE sits at ~log 2.

ORIGIN: `mlp.1`, the ReLU after the first Linear (`mlp.0`): its units are the ones that
die (all of them within ~20 steps); the later layers then see all-zero inputs.

Fix: a learning rate suited to these raw composition features (lr / 20); nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("Composition-based solubility predictors (e.g. PROSO II, SOLpro, DeepSoluE "
          "dipeptide features); LeCun et al. 'Efficient BackProp' (1998) on non-centred "
          "inputs biasing all weight updates of a unit in one direction; dying ReLU at high "
          "learning rates (cs231n notes)")

AA = 20


def _data(g, n, L_min=80, L_max=300):
    # sequences from two composition regimes: soluble proteins are enriched in charged
    # residues (D E K R), insoluble ones in hydrophobics (I L V F W C) and in hydrophobic
    # dipeptides
    base = torch.ones(AA)
    sol = base.clone()
    sol[[2, 3, 8, 14]] += 1.2          # D E K R  (ACDEFGHIKLMNPQRSTVWY order: D=2 E=3 K=8 R=14)
    ins = base.clone()
    ins[[7, 9, 17, 4, 18, 1]] += 1.2   # I L V F W C
    y = (torch.rand(n, generator=g) < 0.5).float()
    X = torch.zeros(n, AA + AA * AA)
    for i in range(n):
        L = int(torch.randint(L_min, L_max, (1,), generator=g))
        mix = 0.35 + 0.3 * float(torch.rand(1, generator=g))
        p = (sol if y[i] > 0 else ins) * (1 - mix) + base * mix
        seq = torch.multinomial(p / p.sum(), L, replacement=True, generator=g)
        aac = torch.bincount(seq, minlength=AA).float() / L
        dp = torch.bincount(seq[:-1] * AA + seq[1:], minlength=AA * AA).float() / (L - 1)
        X[i] = torch.cat([aac, dp]) * 100.0          # percent, not standardised
    return X, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    hid = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [0.2, 0.25, 0.3][seed % 3]
    if fixed:
        lr = lr / 20
    steps = 150

    layers, d = [], AA + AA * AA
    for _ in range(depth):
        layers += [nn.Linear(d, hid), nn.ReLU()]
        d = hid
    layers.append(nn.Linear(d, 1))
    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(*layers))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    crit = nn.BCEWithLogitsLoss()

    def loss_fn(out, y):
        return crit(out.squeeze(-1), y)

    X, y = _data(g, bs * steps)
    batches = [(X[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
