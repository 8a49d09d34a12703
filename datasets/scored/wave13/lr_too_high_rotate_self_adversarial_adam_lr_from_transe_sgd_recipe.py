"""RotatE knowledge-graph embedding (complex entity vectors, relations as
unit-modulus rotations) with self-adversarial negative sampling, trained with
Adam -- at the lr of the plain-SGD TransE script the pipeline was adapted
from.

Mechanism: Adam normalises the gradient, so every touched coordinate moves by
~lr per step regardless of the loss scale.  With lr 0.3-1.0 (instead of
~1e-3..1e-4) the entity coordinates, initialised in +-(gamma+2)/dim, jump by
hundreds of percent of their own size on every step; the update/weight ratio
is ~1.  Distances ||h o r - t|| blow up to tens or hundreds, far beyond the
margin gamma, every positive triple is scored as false (-log sigmoid(gamma - d)
~ d - gamma) and the oscillating parameters never settle: the loss rises
from ~1.4 to a high, noisy plateau instead of decreasing.

ORIGIN: None -- every parameter is over-stepped; no single module starts it.

Fix: Adam lr 2e-3 (everything else identical).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("RotatE (Sun et al., ICLR 2019) KnowledgeGraphEmbedding repo with self-adversarial "
          "sampling; issues about loss increasing / MRR near zero when the learning rate is set "
          "orders of magnitude above the recommended 1e-4..1e-3 for Adam")


class RotatE(nn.Module):
    def __init__(self, n_ent, n_rel, dim, gamma):
        super().__init__()
        self.dim, self.gamma = dim, gamma
        self.range = (gamma + 2.0) / dim
        self.entity = nn.Embedding(n_ent, 2 * dim)
        self.relation = nn.Embedding(n_rel, dim)
        nn.init.uniform_(self.entity.weight, -self.range, self.range)
        nn.init.uniform_(self.relation.weight, -self.range, self.range)

    def distance(self, h, r, t):
        re_h, im_h = self.entity(h).chunk(2, dim=-1)
        re_t, im_t = self.entity(t).chunk(2, dim=-1)
        phase = self.relation(r) / (self.range / math.pi)
        re_r, im_r = torch.cos(phase), torch.sin(phase)
        re = re_h * re_r - im_h * im_r - re_t
        im = re_h * im_r + im_h * re_r - im_t
        return torch.sqrt(re ** 2 + im ** 2 + 1e-9).sum(dim=-1)

    def forward(self, pos, neg_tails):
        h, r, t = pos[:, 0], pos[:, 1], pos[:, 2]
        d_pos = self.distance(h, r, t)
        k = neg_tails.size(1)
        d_neg = self.distance(h[:, None].expand(-1, k), r[:, None].expand(-1, k), neg_tails)
        return self.gamma - d_pos, self.gamma - d_neg


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(n_ent=300, n_rel=10, dim=32, gamma=6.0, k=16, bs=128, lr=0.5),
        dict(n_ent=400, n_rel=8, dim=24, gamma=9.0, k=32, bs=96, lr=1.0),
        dict(n_ent=250, n_rel=12, dim=48, gamma=12.0, k=8, bs=160, lr=0.3),
    ][seed % 3]
    g = torch.Generator().manual_seed(12000 + seed)
    steps = 120
    # ground truth: entities on rings, relations = rotations (+ composition patterns)
    true_phase = torch.rand(cfg["n_ent"], 8, generator=g) * 2 * math.pi
    rel_rot = torch.rand(cfg["n_rel"], 8, generator=g) * 2 * math.pi
    triples = []
    for r in range(cfg["n_rel"]):
        heads = torch.randperm(cfg["n_ent"], generator=g)[: cfg["n_ent"] // 2]
        target = true_phase[heads] + rel_rot[r]
        diff = torch.cos(target[:, None, :] - true_phase[None, :, :]).sum(-1)
        tails = diff.argmax(dim=1)
        triples.append(torch.stack([heads, torch.full_like(heads, r), tails], 1))
    triples = torch.cat(triples)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, triples.size(0), (cfg["bs"],), generator=g)
        neg = torch.randint(0, cfg["n_ent"], (cfg["bs"], cfg["k"]), generator=g)
        batches.append(((triples[idx], neg), torch.ones(cfg["bs"])))

    torch.manual_seed(seed)
    model = RotatE(cfg["n_ent"], cfg["n_rel"], cfg["dim"], cfg["gamma"])
    lr = 2e-3 if fixed else cfg["lr"]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    alpha = 1.0

    def loss_fn(out, _):
        s_pos, s_neg = out
        w = F.softmax(alpha * s_neg, dim=1).detach()  # self-adversarial weights
        neg_loss = -(w * F.logsigmoid(-s_neg)).sum(dim=1).mean()
        pos_loss = -F.logsigmoid(s_pos).mean()
        return (pos_loss + neg_loss) / 2

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
