"""SimSiam (Chen & He 2021) self-supervised pre-training of a small 1-D CNN encoder on
accelerometer windows: two augmentations (random scaling, jitter, time shift) of each window,
projector with BatchNorm, predictor MLP, symmetric negative cosine similarity with stop-gradient
on the target branch. The loss is negative by construction (it starts near 0 and heads towards
-1), the target branch has no gradient at all (stop-gradient through detach), and the per-batch
loss jumps as the augmentation strength varies; none of that is a failure. Collapse is prevented
by the stop-gradient + predictor asymmetry, and the loss decreases steadily. Healthy run."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Chen & He 2021 'Exploring Simple Siamese Representation Learning' (SimSiam), D = -cos with stop-grad"


class SimSiam(nn.Module):
    def __init__(self, c_in=3, d=32, d_pred=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(c_in, 16, 7, padding=3), nn.ReLU(), nn.Conv1d(16, 32, 5, padding=2, stride=2),
                                     nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.projector = nn.Sequential(nn.Linear(32, d), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, d), nn.BatchNorm1d(d))
        self.predictor = nn.Sequential(nn.Linear(d, d_pred), nn.BatchNorm1d(d_pred), nn.ReLU(), nn.Linear(d_pred, d))

    def forward(self, x1, x2):
        z1 = self.projector(self.encoder(x1)); z2 = self.projector(self.encoder(x2))
        p1 = self.predictor(z1); p2 = self.predictor(z2)
        return p1, p2, z1.detach(), z2.detach()


def neg_cosine(out, _y):
    p1, p2, z1, z2 = out
    return -0.5 * (F.cosine_similarity(p1, z2, dim=-1).mean() + F.cosine_similarity(p2, z1, dim=-1).mean())


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    T, B, n_act = 64, 64, 6
    t = torch.arange(T).float()
    freq = 0.05 + 0.3 * torch.rand(n_act, 3, generator=g)
    batches = []
    for i in range(20):
        act = torch.randint(0, n_act, (B,), generator=g)
        ph = 2 * math.pi * torch.rand(B, 3, 1, generator=g)
        base = torch.sin(freq[act][..., None] * t + ph)
        strength = 0.1 + 0.4 * (i % 4) / 3

        def aug():
            scale = 1 + strength * torch.randn(B, 1, 1, generator=g)
            shift = int(torch.randint(0, 8, (1,), generator=g))
            return torch.roll(base * scale, shift, dims=2) + strength * torch.randn(B, 3, T, generator=g)
        batches.append(((aug(), aug()), act))
    model = SimSiam()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    steps = 150
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=neg_cosine, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
