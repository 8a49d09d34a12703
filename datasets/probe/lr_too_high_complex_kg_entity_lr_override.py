"""ComplEx knowledge-graph embedding trained with 1-N scoring (cross-entropy over all
entities) and Adam, where the entity-embedder parameter group carries a learning-rate
override copied from an AdaGrad recipe.

Mechanism: ComplEx/kbc recipes train with AdaGrad at lr 0.1-0.5 (AdaGrad's accumulated
squared gradients shrink the effective step after a few updates).  The config of this
run uses Adam with a per-parameter-group override for the entity embedder, and the
override kept the AdaGrad value (0.3-0.5) while the relation group got an Adam-sized lr.
Adam moves every touched coordinate by ~lr per step whatever the gradient size, so the
entity table (initialised at scale 1e-2, and touched by every query because it is also
the 1-N candidate matrix) takes an update ~25-45x its own norm on the first step (the
relation group: ~3x) and keeps taking lr-sized steps in every coordinate: within ~20
steps the entity vectors are 4-10x longer than in a correctly tuned run, the trilinear
scores Re(<h, r, conj(t)>) become large and erratic, and the cross-entropy rises above its
log(#entities) starting value and never comes back down.  (The relation table then also
shows large relative updates, but only because the inflated entity vectors amplify its
gradients; its own lr is the same as in the fixed run.)

ORIGIN = "ent": the entity embedding table is the parameter group with the oversized
learning rate; its updates are the ones that overshoot.

Fix: give the entity group the same Adam learning rate as the rest (3e-2 to 4e-2 here);
nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = "ent"
SOURCE = ("Trouillon et al. 2016 (ComplEx, AdaGrad lr 0.5) and Lacroix et al. 2018 kbc (1-N scoring, "
          "AdaGrad lr 0.1); per-parameter-group lr overrides in KGE frameworks (e.g. LibKGE optimizer "
          "param groups); the common mistake of carrying an AdaGrad learning rate over to Adam")


class ComplEx(nn.Module):
    def __init__(self, n_ent, n_rel, rank, init):
        super().__init__()
        self.rank = rank
        self.ent = nn.Embedding(n_ent, 2 * rank)
        self.rel = nn.Embedding(n_rel, 2 * rank)
        self.ent.weight.data.mul_(init)
        self.rel.weight.data.mul_(init)

    def forward(self, q):
        h = self.ent(q[:, 0]); r = self.rel(q[:, 1])
        k = self.rank
        hr, hi = h[:, :k], h[:, k:]
        rr, ri = r[:, :k], r[:, k:]
        E = self.ent.weight
        er, ei = E[:, :k], E[:, k:]
        qr = hr * rr - hi * ri
        qi = hr * ri + hi * rr
        return qr @ er.t() + qi @ ei.t()            # [B, n_ent] scores against every entity


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    n_ent = [300, 400, 350][seed % 3]
    n_rel = [12, 20, 16, 24][seed % 4]
    rank = [32, 48, 40][seed % 3]
    n_cl = 8
    bs = [128, 96, 128, 160][seed % 4]
    steps = 240 + 30 * (seed % 3)
    bad_lr = [0.5, 0.3, 0.4][seed % 3]
    good_lr = [3e-2, 4e-2, 3e-2][seed % 3]

    # latent-cluster KG: relation r maps head cluster c to tail cluster pi_r(c)
    cl = torch.randint(0, n_cl, (n_ent,), generator=g)
    members = [torch.nonzero(cl == c).flatten() for c in range(n_cl)]
    perm = torch.stack([torch.randperm(n_cl, generator=g) for _ in range(n_rel)])
    batches = []
    for _ in range(steps):
        h = torch.randint(0, n_ent, (bs,), generator=g)
        r = torch.randint(0, n_rel, (bs,), generator=g)
        tc = perm[r, cl[h]]
        t = torch.stack([members[int(c)][int(torch.randint(0, len(members[int(c)]), (1,), generator=g))] for c in tc])
        batches.append((torch.stack([h, r], 1), t))

    model = ComplEx(n_ent, n_rel, rank, 1e-2)
    # per-parameter-group config: the entity embedder has its own lr override
    opt = torch.optim.Adam([
        {"params": model.ent.parameters(), "lr": good_lr if fixed else bad_lr},
        {"params": model.rel.parameters(), "lr": good_lr},
    ])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
