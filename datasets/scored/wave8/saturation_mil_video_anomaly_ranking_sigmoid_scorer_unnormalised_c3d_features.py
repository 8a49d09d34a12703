"""Weakly-supervised video anomaly detector in the style of Sultani et al. (MIL ranking): each
video is a bag of 32 segment features from a frozen C3D/I3D backbone; an MLP (fc-ReLU-fc-ReLU-fc)
ends in a sigmoid anomaly score, and the loss is the MIL hinge ranking loss
max(0, 1 - max_i s(anomalous_i) + max_j s(normal_j)) plus a small temporal-smoothness term. The
paper L2-normalises each 4096-d C3D fc6 feature; this pipeline feeds the raw post-ReLU fc6
activations (norms ~1e3). Every weight update is multiplied by those feature magnitudes, so
after the first Adagrad step the scorer's last layer receives pre-activations of tens to hundreds
of units and the sigmoid sits at exactly 0 or 1 for most segments: the max segment score of
both bags is ~1, the hinge is ~1 and its gradient is multiplied by s(1-s) ~ 0, so the loss stays
on a plateau (finite) from the first step. Fix: L2-normalise the segment features as in the paper
(smaller pre-activations into the sigmoid)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "scorer.4"
SOURCE = ("Sultani, Chen, Shah 2018 'Real-world Anomaly Detection in Surveillance Videos' (C3D fc6 "
          "features L2-normalised, MIL ranking loss with sigmoid scores); re-implementations whose "
          "loss is stuck at 1.0 because the features were not normalised")


class MILScorer(nn.Module):
    def __init__(self, d=256, l2norm=False):
        super().__init__()
        self.l2norm = l2norm
        self.scorer = nn.Sequential(
            nn.Linear(d, 64), nn.ReLU(),
            nn.Linear(64, 16), nn.ReLU(),
            nn.Linear(16, 1), nn.Sigmoid(),
        )

    def forward(self, anomalous, normal):          # (B, 32, d) each
        if self.l2norm:
            anomalous = F.normalize(anomalous, dim=-1)
            normal = F.normalize(normal, dim=-1)
        return self.scorer(anomalous).squeeze(-1), self.scorer(normal).squeeze(-1)


def _bags(g, n, S=32, d=256):
    proto_norm = torch.relu(torch.randn(d, generator=g))
    proto_anom = torch.relu(torch.randn(d, generator=g))
    def feats(k):
        base = torch.relu(torch.randn(k, S, d, generator=g) * 0.8 + proto_norm)
        return base * (80.0 + 40.0 * torch.rand(k, S, 1, generator=g))        # raw fc6 magnitudes
    normal = feats(n)
    anomalous = feats(n)
    for b in range(n):
        on = int(torch.randint(0, S - 6, (1,), generator=g))
        ln = int(torch.randint(3, 7, (1,), generator=g))
        a = torch.relu(torch.randn(ln, d, generator=g) * 0.8 + proto_anom) * (80.0 + 40.0 * torch.rand(ln, 1, generator=g))
        anomalous[b, on:on + ln] = a
    return (anomalous, normal), torch.zeros(n)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MILScorer(l2norm=fixed)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.01)
    pool = [_bags(g, 16) for _ in range(15)]
    steps = 120
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(scores, _dummy):
        sa, sn = scores
        rank = F.relu(1.0 - sa.max(1).values + sn.max(1).values).mean()
        smooth = ((sa[:, 1:] - sa[:, :-1]) ** 2).sum(1).mean()
        return rank + 8e-5 * smooth

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
