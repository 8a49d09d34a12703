"""A two-tower retrieval model (query tower over query-side sensor/context features, item tower over
catalogue features; tuple input (query, item)) is trained with an in-batch sampled softmax: the B x B
matrix of dot-product scores against the diagonal positives. Both towers are five ReLU layers deep
and were initialised with a copied helper that draws every Linear weight from N(0, 0.01^2) (the old
TF1 random_normal default) with zero biases. With fan-in 32-64, each layer multiplies the activation
scale by ~0.01*sqrt(fan_in/2) ~ 0.05, so the tower outputs are ~1e-7 of the inputs at step 0 and the
scores (a product of two such towers) are ~1e-13: the softmax is exactly uniform, the loss sits at
log(B), and the gradient reaching any layer is a product of the other layers' tiny weights, so SGD
with Nesterov momentum cannot move it. The fix is Kaiming (fan-in, ReLU) init for the hidden layers
and Xavier for the projection layers; everything else is identical.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "query_tower.0"
SOURCE = ("Known pattern: TF1-style tf.random_normal_initializer(stddev=0.01) applied to deep ReLU "
          "towers (He et al. 2015 'Delving deep into rectifiers' on vanishing activations with fixed "
          "small std); two-tower in-batch softmax (Yi et al. 2019, RecSys).")

DQ, DI, DL = 24, 20, 8
B = 64
LR = 0.01


def tower(din):
    return nn.Sequential(nn.Linear(din, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                         nn.Linear(32, 32))


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.query_tower = tower(DQ)
        self.item_tower = tower(DI)

    def forward(self, q, it):
        return self.query_tower(q) @ self.item_tower(it).T


def _init(model, fixed):
    for tw in (model.query_tower, model.item_tower):
        lins = [m for m in tw if isinstance(m, nn.Linear)]
        for i, m in enumerate(lins):
            if fixed:
                if i < len(lins) - 1:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.xavier_normal_(m.weight)
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    model = TwoTower()
    _init(model, fixed)
    Aq = torch.randn(DL, DQ, generator=g) / math.sqrt(DL)
    Ai = torch.randn(DL, DI, generator=g) / math.sqrt(DL)
    steps = 150
    pool = []
    for _ in range(30):
        z = torch.randn(B, DL, generator=g)
        q = torch.tanh(z @ Aq) + 0.1 * torch.randn(B, DQ, generator=g)
        it = torch.tanh((z + 0.2 * torch.randn(B, DL, generator=g)) @ Ai) \
            + 0.1 * torch.randn(B, DI, generator=g)
        pool.append(((q, it), torch.arange(B)))
    batches = [pool[i % len(pool)] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, nesterov=True)
    ce = nn.CrossEntropyLoss()

    def loss_fn(scores, target):
        return ce(scores, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
