"""Learning without Forgetting (LwF, Li & Hoiem 2016) on pooled frozen-backbone features: a
shared MLP trunk with an old-task head (distillation) and a new-task head.  The joint
fine-tuning phase reuses the peak learning rate of the from-scratch task-A recipe.

Mechanism: build() trains trunk + old head on task A, records the old head's responses on the
task-B data (the LwF targets), and warms up the new head alone (SGD lr 0.05).  The scenario
is the LwF joint phase: every parameter is trained on CE(new head) + T^2 * KL(old head,
recorded responses, T=2).  The user copied the optimiser line of the from-scratch config,
SGD(lr=0.3, momentum=0.9) -- the peak of a one-cycle schedule for training from random init --
where LwF fine-tunes the shared weights with a much smaller lr.  The backbone features are
post-ReLU (non-negative), so a unit's incoming-weight gradients all share one sign; the large
momentum steps push the first trunk layer's pre-activations below zero for every input
within a few steps.  The first trunk ReLU then outputs exact zeros, no gradient reaches the
trunk again, both heads only see their biases and the loss freezes at a plateau.

ORIGIN: `trunk.1`, the first trunk ReLU (input side) that dies and cuts off everything after.

Fix: a fine-tuning lr for the joint phase, 0.03 (10x lower); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "trunk.1"
SOURCE = ("Li & Hoiem 2016 'Learning without Forgetting' (warm-up of the new head, then joint "
          "fine-tuning with a reduced lr, KD loss with T=2); continual-learning repo issues where "
          "fine-tuning the shared trunk with the from-scratch lr kills its ReLUs")


class LwFNet(nn.Module):
    def __init__(self, d_in, hidden, n_old, n_new):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.old_head = nn.Linear(hidden, n_old)
        self.new_head = nn.Linear(hidden, n_new)

    def forward(self, x):
        h = self.trunk(x)
        return self.new_head(h), self.old_head(h)


def lwf_loss(out, target, T=2.0, lam=1.0):
    new_logits, old_logits = out
    y_new, old_recorded = target
    ce = F.cross_entropy(new_logits, y_new)
    kd = F.kl_div(F.log_softmax(old_logits / T, -1), F.softmax(old_recorded / T, -1),
                  reduction="batchmean") * T * T
    return ce + lam * kd


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d_in=64, hidden=128, bs=64, steps=120),
           dict(d_in=48, hidden=96, bs=96, steps=100),
           dict(d_in=80, hidden=64, bs=48, steps=140)][seed % 3]
    g = torch.Generator().manual_seed(555 + seed)
    d_in, n_old, n_new = cfg["d_in"], 5, 4
    P = torch.randn(32, d_in, generator=g) / 32 ** 0.5

    def features(n):                      # pooled post-ReLU backbone features (>= 0)
        return torch.relu(torch.randn(n, 32, generator=g) @ P + 0.3)

    WA = torch.randn(d_in, n_old, generator=g)
    WB = torch.randn(d_in, n_new, generator=g)
    mu = features(4000).mean(0)

    def labels(x, W):
        return ((x - mu) @ W).argmax(1)

    torch.manual_seed(seed)
    model = LwFNet(d_in, cfg["hidden"], n_old, n_new)
    # --- task A training (old task) ---
    opt_a = torch.optim.Adam(list(model.trunk.parameters()) + list(model.old_head.parameters()), 2e-3)
    for _ in range(150):
        x = features(64)
        opt_a.zero_grad()
        F.cross_entropy(model(x)[1], labels(x, WA)).backward()
        opt_a.step()
    # --- task B data, LwF recorded responses of the old head ---
    n = cfg["bs"] * cfg["steps"]
    XB = features(n)
    YB = labels(XB, WB)
    with torch.no_grad():
        old_rec = model(XB)[1]
    # --- warm-up: new head only, frozen trunk ---
    opt_w = torch.optim.SGD(model.new_head.parameters(), lr=0.05, momentum=0.9)
    for i in range(30):
        x, y = XB[(i * 64) % n:(i * 64) % n + 64], YB[(i * 64) % n:(i * 64) % n + 64]
        opt_w.zero_grad()
        F.cross_entropy(model(x)[0], y).backward()
        opt_w.step()

    bs = cfg["bs"]
    batches = [(XB[i * bs:(i + 1) * bs], (YB[i * bs:(i + 1) * bs], old_rec[i * bs:(i + 1) * bs]))
               for i in range(cfg["steps"])]
    lr = 0.03 if fixed else 0.3            # BUG: from-scratch peak lr reused for fine-tuning
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lwf_loss, batches=batches, steps=cfg["steps"])
