"""Triplet-margin metric learning (FaceNet-style loss, random triplet sampling) of a small MLP embedding
for 12-40 identities of synthetic descriptor vectors. What looks alarming is normal: with random
(not hard-mined) triplets most triplets quickly satisfy the margin, so the hinge is inactive for
them and the gradient comes from a shrinking minority; on some late batches every triplet is
satisfied and the loss and every gradient are EXACTLY zero (it looks like a dead network or a
broken graph), and the loss curve is a spiky sequence of small values and zeros. The embedding is
nevertheless learning normally (SGD with momentum)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "FaceNet (Schroff et al. 2015) triplet loss; 'triplet loss becomes exactly 0' FAQ in pytorch-metric-learning / forum threads (easy triplets)"

class Embed(nn.Module):
    def __init__(self, d, hid, emb):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, emb))
    def forward(self, a, p, n):
        f = lambda x: F.normalize(self.net(x), dim=-1)
        return f(a), f(p), f(n)

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(191 + seed)
    d, hid, emb, n_id, bs, lr, steps, margin = [(32, 64, 16, 20, 32, 0.05, 160, 0.3), (24, 48, 8, 12, 16, 0.08, 140, 0.4), (40, 64, 24, 40, 48, 0.03, 200, 0.3)][seed]
    model = Embed(d, hid, emb)
    protos = torch.randn(n_id, d, generator=g)
    batches = []
    for _ in range(steps):
        ia = torch.randint(0, n_id, (bs,), generator=g)
        ineg = (ia + torch.randint(1, n_id, (bs,), generator=g)) % n_id
        noise = lambda: 0.9 * torch.randn(bs, d, generator=g)
        batches.append(((protos[ia] + noise(), protos[ia] + noise(), protos[ineg] + noise()), torch.zeros(bs)))
    crit = nn.TripletMarginLoss(margin=margin)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, _y: crit(*out), batches=batches, steps=steps, amp_dtype=None, scaler=None)
