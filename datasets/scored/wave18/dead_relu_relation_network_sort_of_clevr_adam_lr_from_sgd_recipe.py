"""Relation Network (Santoro et al. 2017) on a Sort-of-CLEVR-style state
description: g_theta (a 4-layer ReLU MLP) is applied to every ordered object
pair, the pair outputs are summed, and f_phi maps the sum to the answer to
"how many objects lie to the left of the queried object?".

Mechanism: the user set Adam's lr to 0.05-0.1, a value taken from an SGD
recipe (the paper uses Adam at 2.5e-4).  All object features are non-negative
(coordinates in [0, 1], a query flag), and the gradient reaching the last
g_theta layer is the *same* dL/d(sum) for all N^2 pairs.  On the first steps
Adam moves every weight and bias of that layer by ~lr in a consistent
direction; for most units this leaves the pre-activation negative for every
pair of every scene.  Those ReLUs then output exactly 0, receive no gradient,
and stay dead (94-100% of g_theta's last-layer units after ~30 steps).  The summed
relation vector is constant, f_phi can only predict the answer prior, and the
loss sits at ~log(N) for the rest of the run.

ORIGIN: ``g.7`` -- the ReLU after the last g_theta Linear is where the units die
(the earlier g_theta layers only lose their gradient because of it).

Fix: Adam at lr=3e-3 (same model, data, steps); the units stay alive.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "g.7"
SOURCE = ("Santoro et al. 2017 'A simple neural network module for relational reasoning' "
          "(Sort-of-CLEVR state-description RN, Adam 2.5e-4); RN re-implementations reporting "
          "'accuracy stuck at chance, g outputs all zero' after raising the learning rate")


class RelationNetwork(nn.Module):
    def __init__(self, obj_dim, width, n_ans):
        super().__init__()
        self.g = nn.Sequential(
            nn.Linear(2 * obj_dim, width), nn.ReLU(),
            nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, width), nn.ReLU(),
        )
        self.f = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, n_ans))

    def forward(self, objs):                    # objs (B, N, D)
        B, N, D = objs.shape
        oi = objs.unsqueeze(2).expand(B, N, N, D)
        oj = objs.unsqueeze(1).expand(B, N, N, D)
        pairs = torch.cat([oi, oj], dim=-1).reshape(B, N * N, 2 * D)
        rel = self.g(pairs).sum(dim=1)          # sum over all ordered pairs
        return self.f(rel)


def _scenes(g, steps, bsz, n_obj):
    # state description per object: (x, y, is_queried); question: "how many
    # objects lie to the left of the queried object?"
    batches = []
    for _ in range(steps):
        pos = torch.rand(bsz, n_obj, 2, generator=g)
        c = torch.randint(0, n_obj, (bsz,), generator=g)
        flag = torch.nn.functional.one_hot(c, n_obj).float().unsqueeze(-1)
        objs = torch.cat([pos, flag], dim=-1)
        xc = pos[torch.arange(bsz), c, 0]
        ans = (pos[..., 0] < xc[:, None]).sum(dim=1)
        batches.append((objs, ans))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(n_obj=6, width=64, bsz=32, lr=0.1, steps=150),
        dict(n_obj=8, width=48, bsz=24, lr=0.05, steps=180),
        dict(n_obj=6, width=96, bsz=48, lr=0.1, steps=140),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    n = cfg["n_obj"]
    model = RelationNetwork(3, cfg["width"], n)
    lr = 3e-3 if fixed else cfg["lr"]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = _scenes(g, cfg["steps"], cfg["bsz"], n)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
