"""Metric-learning embedding network for sensor-signature retrieval (24-d standardised features,
12 heavily overlapping device classes) trained with the triplet margin loss (margin 1.0, Euclidean
distance) and SGD + momentum at lr=0.5. The embedding head ends with Linear -> ReLU (a copy-paste
of the hidden block), so the embedding coordinates are ReLU units. On hard, overlapping data the
cheapest early way to lower the loss is to shrink all embeddings, and the large momentum steps
overshoot: within a few steps every head unit's pre-activation is negative for every input. A
dead head unit outputs 0 for all samples and never gets a gradient again; once all are dead every
embedding is the zero vector, d(a, p) = d(a, n) = 0, the loss is exactly the margin (1.0) for every
triplet and every gradient is zero: the classic "triplet loss stuck at the margin" plateau, with
no NaN. The fixed run only lowers the learning rate to 0.05, so the head units survive the first
updates."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("'Triplet loss stuck at margin' reports (PyTorch forums, StackOverflow, e.g. embeddings "
          "collapsing to zero with a ReLU on the embedding layer)")


class EmbeddingNet(nn.Module):
    def __init__(self, d_in, d_emb):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(64, d_emb), nn.ReLU())

    def forward(self, a, p, n):
        f = lambda x: self.head(self.body(x))
        return f(a), f(p), f(n)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in, n_cls = 24, 12
    centers = torch.randn(n_cls, d_in, generator=g)
    batches = []
    for _ in range(20):
        ya = torch.randint(0, n_cls, (128,), generator=g)
        yn = (ya + torch.randint(1, n_cls, (128,), generator=g)) % n_cls
        s = lambda y: centers[y] + 2.0 * torch.randn(128, d_in, generator=g)
        batches.append(((s(ya), s(ya), s(yn)), torch.zeros(128)))
    model = EmbeddingNet(d_in, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 0.5, momentum=0.9)
    steps = 150
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, _y: F.triplet_margin_loss(*out, margin=1.0),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
