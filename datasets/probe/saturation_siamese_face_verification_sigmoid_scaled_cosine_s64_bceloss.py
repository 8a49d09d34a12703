"""Siamese face-verification net: shared CNN embedder (conv-BN-ReLU, GAP, ReLU embedding),
pair score p = sigmoid(s * cos(e1, e2) + b), nn.BCELoss on same/different labels.

Mechanism: the scale s = 64 is copied from ArcFace/CosFace softmax recipes (where it feeds a
cross-entropy over many classes) into a single sigmoid. The embeddings come out of a ReLU, so
cos(e1, e2) is in [0, 1] and starts around 0.5-0.9: s*cos is 30-60 and the Sigmoid outputs exactly
1.0 in float32 for every pair. nn.BCELoss then sees p = 1: different-identity pairs cost the
clamped 100 with zero gradient (sigmoid' = 0), same pairs cost 0; nothing learns, the loss is flat.
ORIGIN: head.act, the Sigmoid that saturates.
Fix: s = 10, b = -5 (the GE2E-style verification scale), nothing else changes.
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "head.act"
SOURCE = "ArcFace/CosFace s=64 reused in a sigmoid verification head; GE2E (Wan et al. 2018) uses w=10, b=-5"


class Head(nn.Module):
    def __init__(self, s, b):
        super().__init__()
        self.s, self.b = s, b
        self.act = nn.Sigmoid()

    def forward(self, e1, e2):
        return self.act(self.s * F.cosine_similarity(e1, e2, dim=1) + self.b)


class Siamese(nn.Module):
    def __init__(self, w, d, s, b):
        super().__init__()
        self.embed = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
            nn.Flatten(), nn.Linear(2 * w, d), nn.ReLU())
        self.head = Head(s, b)

    def forward(self, x1, x2):
        return self.head(self.embed(x1), self.embed(x2))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, d, bs, lr, steps = [(8, 32, 16, 1e-3, 60), (12, 24, 12, 2e-3, 80), (8, 48, 20, 5e-4, 70)][seed % 3]
    model = Siamese(w, d, *((10.0, -5.0) if fixed else (64.0, 0.0)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    ids = torch.rand(10, 1, 12, 12, generator=g)
    batches = []
    for _ in range(steps):
        a = torch.randint(0, 10, (bs,), generator=g)
        same = (torch.rand(bs, generator=g) < 0.5)
        b = torch.where(same, a, (a + torch.randint(1, 10, (bs,), generator=g)) % 10)
        x1 = ids[a] + 0.1 * torch.randn(bs, 1, 12, 12, generator=g)
        x2 = ids[b] + 0.1 * torch.randn(bs, 1, 12, 12, generator=g)
        batches.append(((x1, x2), same.float()))
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
