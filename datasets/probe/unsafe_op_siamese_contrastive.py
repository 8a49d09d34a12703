"""Siamese 1-D CNN for signal verification, Euclidean distance written as sqrt(sum(diff**2)).

Mechanism
---------
A twin network embeds both members of a pair and a parameter-free ``distance``
module returns ``torch.sqrt(((a - b) ** 2).sum(-1))``; the loss is the
Hadsell-Chopra-LeCun contrastive loss y*d^2 + (1-y)*relu(m-d)^2.  The pair
sampler draws the positive partner "from any member of the anchor's class",
which now and then is the anchor itself.  For that pair both branches compute
bit-identical embeddings, d = sqrt(0) = 0: the forward value is fine, but the
backward of sqrt at 0 is 1/(2*sqrt(0)) = inf, multiplied by d(diff^2)/d(diff)
= 0 gives NaN.  The NaN gradient reaches every weight of the shared embedder,
Adam writes NaN into the parameters, and from the next step on the loss is NaN.
Before the first self-pair the run is calm and the loss falls normally; the
data are legitimate (a duplicate pair is a perfectly valid positive).

Fix
---
Make the op safe at 0: ``sqrt(sum + eps)`` (what F.pairwise_distance does with
its eps, and the epsilon adambielski/siamese-triplet added).  ``fixed=True``
only sets eps=1e-12 in the distance module; the data and sampler are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "distance"
SOURCE = ("adambielski/siamese-triplet#18 (contrastive loss derivatives suddenly NaN: distance exactly 0 "
          "for two identical samples, gradient of sqrt at 0; fixed with an epsilon); tensorflow/tensorflow#30199 "
          "(triplet loss NaN gradient when a positive equals its anchor); pytorch/pytorch#6394 (sqrt grad at 0)")


class EuclideanDistance(nn.Module):
    def __init__(self, eps=0.0):
        super().__init__()
        self.eps = eps

    def forward(self, a, b):
        return torch.sqrt(((a - b) ** 2).sum(-1) + self.eps)


class SiameseNet(nn.Module):
    def __init__(self, dim=16, eps=0.0):
        super().__init__()
        self.embed = nn.Sequential(
            nn.Conv1d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
            nn.Flatten(), nn.Linear(32, dim))
        self.distance = EuclideanDistance(eps)

    def forward(self, x1, x2):
        return self.distance(self.embed(x1), self.embed(x2))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    lr = [1e-3, 1.5e-3, 2e-3][seed % 3]
    n_cls, per_cls, length, batch, steps = 8, 600, 64, 32, 300
    t = torch.linspace(0, 1, length)
    freqs = 1 + 5 * torch.rand(n_cls, 3, generator=g)
    phases = 6.28 * torch.rand(n_cls, 3, generator=g)
    protos = torch.sin(6.28 * freqs[:, :, None] * t + phases[:, :, None]).sum(1)
    cls = torch.arange(n_cls).repeat_interleave(per_cls)
    shift = torch.randint(-4, 5, (n_cls * per_cls,), generator=g)
    pool = torch.stack([torch.roll(protos[c], int(s)) for c, s in zip(cls.tolist(), shift.tolist())])
    pool = pool * (0.8 + 0.4 * torch.rand(n_cls * per_cls, 1, generator=g)) \
        + 0.3 * torch.randn(n_cls * per_cls, length, generator=g)
    batches = []
    for _ in range(steps):
        a = torch.randint(0, n_cls * per_cls, (batch,), generator=g)
        same = torch.rand(batch, generator=g) < 0.5
        pos = cls[a] * per_cls + torch.randint(0, per_cls, (batch,), generator=g)  # may be the anchor itself
        other = (cls[a] + torch.randint(1, n_cls, (batch,), generator=g)) % n_cls
        neg = other * per_cls + torch.randint(0, per_cls, (batch,), generator=g)
        b = torch.where(same, pos, neg)
        batches.append(((pool[a, None], pool[b, None]), same.float()))
    model = SiameseNet(eps=1e-12 if fixed else 0.0)
    margin = 2.0

    def loss_fn(d, y):
        return (y * d ** 2 + (1 - y) * F.relu(margin - d) ** 2).mean()

    return dict(model=model, optimizer=torch.optim.Adam(model.parameters(), lr=lr), loss_fn=loss_fn,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
