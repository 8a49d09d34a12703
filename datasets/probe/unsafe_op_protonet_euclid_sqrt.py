"""Prototypical network (1-shot episodes) with a hand-written Euclidean metric.

Mechanism
---------
A Conv-4-style encoder embeds the support and query images of an episode in one
batched forward pass.  The metric module computes
``dist = ((q[:, None] - p[None]) ** 2).sum(-1).sqrt()`` and the logits are
``-dist``.  In 1-shot episodes the prototype of a class *is* the embedding of its
single support image (mean over one row is exact).

The episode sampler draws the support shot and the query shots of a class
independently from that class's pool (it does not exclude the support index).
With ``pool`` images per class (~400-600 depending on the seed), 5 ways and 2-3
queries per way, an episode contains a query that is the very same image as its
support shot with probability ~2-3 %, so the first collision lands at a
seed-dependent step (measured: step 59 / 30 / 9 for seeds 0 / 1 / 2).  Until
then training is perfectly calm (loss ~1.4 falling to ~0.9-1.1).

When the collision happens, the query embedding and the prototype are bitwise
identical (same input rows, same batched kernels, same BatchNorm statistics), so
``q - p`` is exactly 0, ``d2 = 0`` and ``sqrt(0) = 0``: the forward pass and the
loss are finite (measured loss at the collision step: 1.10 / 0.91 / 1.16).  In the backward pass ``d sqrt(d2)/d d2 = 0.5 / sqrt(0) = inf``
and the chain rule multiplies it by ``d d2/d(q-p) = 2 (q-p) = 0``, giving
``inf * 0 = NaN``.  The NaN is born in the BACKWARD pass only, flows into every
encoder weight, Adam writes NaN into all parameters, and the next step's loss is
NaN.

ORIGIN = "metric": the module that holds the unsafe sqrt (the first non-finite
value is the gradient computed inside it).

fixed=True: the metric uses ``d2.clamp_min(1e-12).sqrt()`` (same data, same
episodes, same optimizer); the zero-distance pair then gets a zero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "metric"
SOURCE = ("NaN gradients of hand-written Euclidean distances at zero distance "
          "(PyTorch forum 'sqrt backward nan at 0', torch.cdist / pairwise-distance "
          "issues); few-shot episode samplers that let query and support overlap")


class EuclideanDistance(nn.Module):
    def __init__(self, safe: bool):
        super().__init__()
        self.safe = safe

    def forward(self, q, p):
        d2 = ((q[:, None, :] - p[None, :, :]) ** 2).sum(-1)
        if self.safe:
            d2 = d2.clamp_min(1e-12)
        return d2.sqrt()


class ProtoNet(nn.Module):
    def __init__(self, width, emb, safe):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o),
                                 nn.ReLU(), nn.MaxPool2d(2))
        self.encoder = nn.Sequential(block(1, width), block(width, width), nn.Flatten(),
                                     nn.Linear(width * 9, emb))
        self.metric = EuclideanDistance(safe)

    def forward(self, support, query):
        n_way = support.shape[0]
        z = self.encoder(torch.cat([support, query], 0))
        protos = z[:n_way]              # 1-shot: prototype == support embedding
        zq = z[n_way:]
        return -self.metric(zq, protos)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    n_classes = 40
    pool = [600, 450, 500][seed % 3]
    n_way = 5
    n_query = [2, 3, 2][seed % 3]
    steps = 300
    side = 12
    # synthetic "character" classes: a random stroke template + per-image jitter/noise
    templates = (torch.rand(n_classes, 1, side, side, generator=g) > 0.7).float()
    imgs = templates[:, None].repeat(1, pool, 1, 1, 1)
    shift = torch.randint(-1, 2, (n_classes, pool, 2), generator=g)
    for c in range(n_classes):
        for k in range(0, pool, 50):   # coarse jitter groups keep generation cheap
            dx, dy = int(shift[c, k, 0]), int(shift[c, k, 1])
            imgs[c, k:k + 50] = torch.roll(imgs[c, k:k + 50], (dx, dy), (-2, -1))
    imgs = imgs + 0.3 * torch.randn(imgs.shape, generator=g)

    batches = []
    for _ in range(steps):
        cls = torch.randperm(n_classes, generator=g)[:n_way]
        s_idx = torch.randint(0, pool, (n_way,), generator=g)
        q_idx = torch.randint(0, pool, (n_way, n_query), generator=g)  # not disjoint from s_idx
        support = imgs[cls, s_idx]                                   # (n_way,1,H,W)
        query = imgs[cls[:, None], q_idx].reshape(n_way * n_query, 1, side, side)
        target = torch.arange(n_way).repeat_interleave(n_query)
        batches.append(((support, query), target))

    torch.manual_seed(seed)
    model = ProtoNet(width=[16, 12, 16][seed % 3], emb=[32, 24, 32][seed % 3], safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=[1e-3, 2e-3, 1.5e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
