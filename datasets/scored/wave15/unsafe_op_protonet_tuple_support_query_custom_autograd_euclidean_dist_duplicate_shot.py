"""Prototypical network (Snell et al. 2017) for few-shot classification, called as
model(support, query) with a tuple input. Support and query images are embedded
together by a small conv encoder (no BatchNorm), class prototypes are the means of
the support embeddings, and logits are minus the Euclidean distance computed by a
hand-written torch.autograd.Function (`EuclideanDist`) whose backward is
grad * (q - c) / d.

Mechanism: the episodes are 1-shot, so a prototype is exactly one support
embedding. The episode sampler draws query and support with replacement; in one
episode a query image is the very same image as its class's support shot, so its
embedding equals the prototype and the distance is exactly 0. The forward is fine
(logit 0), but the backward computes 0/0 = NaN, which flows into every encoder
gradient; Adam writes NaN into the weights and the loss is NaN from the next step.

ORIGIN: `dist`, the module wrapping the custom Function that produces the first NaN.

Fix: clamp the distance, d = sqrt(clamp_min(sum sq, 1e-12)) (epsilon in the op); the
duplicated episode is kept.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "dist"
SOURCE = ("Snell et al. 2017 ProtoNets; custom sqrt-distance autograd Functions giving NaN "
          "gradients at zero distance (pytorch issues on torch.norm/cdist backward at 0).")


def _make_fn(eps):
    class EuclideanDist(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, c):                      # q (Q, d), c (N, d)
            diff = q.unsqueeze(1) - c.unsqueeze(0)   # (Q, N, d)
            sq = (diff * diff).sum(-1)
            d = sq.clamp_min(eps).sqrt() if eps > 0 else sq.sqrt()
            ctx.save_for_backward(diff, d)
            return d

        @staticmethod
        def backward(ctx, g):
            diff, d = ctx.saved_tensors
            w = (g / d).unsqueeze(-1) * diff
            return w.sum(1), -w.sum(0)

    return EuclideanDist


class Dist(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.fn = _make_fn(eps)

    def forward(self, q, c):
        return self.fn.apply(q, c)


class ProtoNet(nn.Module):
    def __init__(self, ch, d, eps):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(ch * 4 * 4, d))
        self.dist = Dist(eps)

    def forward(self, support, query):             # support (N_way, 1, 16, 16), 1-shot
        z = self.encoder(torch.cat([support, query], 0))
        protos, zq = z[: support.shape[0]], z[support.shape[0]:]
        return -self.dist(zq, protos)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(ch=8, d=32, way=5, nq=10, lr=1e-3, dup=30, steps=70),
           dict(ch=12, d=24, way=4, nq=12, lr=2e-3, dup=45, steps=80),
           dict(ch=8, d=48, way=6, nq=8, lr=1e-3, dup=18, steps=60)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    n_classes = 20
    protos_img = (torch.rand(n_classes, 1, 16, 16, generator=g) > 0.5).float()
    model = ProtoNet(cfg["ch"], cfg["d"], eps=1e-12 if fixed else 0.0)
    batches = []
    for s in range(cfg["steps"]):
        cls = torch.randperm(n_classes, generator=g)[: cfg["way"]]
        support = protos_img[cls] + 0.4 * torch.randn(cfg["way"], 1, 16, 16, generator=g)
        yq = torch.randint(0, cfg["way"], (cfg["nq"],), generator=g)
        query = protos_img[cls[yq]] + 0.4 * torch.randn(cfg["nq"], 1, 16, 16, generator=g)
        if s == cfg["dup"]:
            query[0] = support[yq[0]]                # same image drawn as shot and query
        batches.append(((support, query), yq))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
