"""SiamRPN-style tracker: the anchor box-regression branch (a BN-free 3x3 conv tower with ReLU and
a 1x1 conv giving 4 deltas per anchor) trained alone on cached depth-wise cross-correlation
features of template and search crops from a frozen backbone; smooth-L1 on positive anchors.

Mechanism: because "only the head is trained, the backbone is frozen", the lr was raised from
the recipe's 0.02 to 0.25-0.4 (SGD, momentum 0.9).  The cached correlation features are
non-negative (correlations of post-ReLU features) with a large common component, so the first
momentum-amplified updates move every filter of the tower's first conv by a large amount in a
direction shared across all positions; for most filters the pre-activation becomes negative
at every anchor of every search region.  Those ReLU units then output exactly zero and get
exactly zero gradient, so they never return; the deeper tower layers lose their input with
them.  The regression output collapses to the 1x1 conv's bias, and since the encoded deltas
are zero-mean, the smooth-L1 loss stays at its starting value (a stall, nothing non-finite).

ORIGIN: "tower.0", the first conv of the tower: its ReLU (tower.1) is the layer that goes
~90% silent within the first twenty steps, cutting the features off from the loss.

Fix: the recipe lr (0.02) for the head; architecture, data, momentum and steps unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "tower.0"
SOURCE = ("Li et al., SiamRPN (CVPR 2018) / SiamRPN++ depth-wise xcorr + RPN box branch; "
          "'train the head on cached features with a bigger lr' -> ReLU tower outputs all "
          "zero, loss flat (dying ReLU, CS231n notes; Lu et al. 2019)")


class SiamRPNRegHead(nn.Module):
    def __init__(self, c, w, depth, anchors):
        super().__init__()
        layers, ci = [], c
        for _ in range(depth):
            layers += [nn.Conv2d(ci, w, 3, padding=1), nn.ReLU()]
            ci = w
        self.tower = nn.Sequential(*layers)
        self.bbox_pred = nn.Conv2d(w, 4 * anchors, 1)

    def forward(self, feat):
        return self.bbox_pred(self.tower(feat))


def rpn_box_loss(out, target):
    deltas, pos = target                                  # (B, A, 4, H, W), (B, A, H, W)
    n, _, h, w = out.shape
    out = out.view(n, -1, 4, h, w)
    per = F.smooth_l1_loss(out, deltas, reduction="none", beta=1.0 / 9).sum(2)
    return (per * pos).sum() / pos.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [32, 48, 32][seed % 3]
    w = [32, 32, 48][seed % 3]
    depth = [2, 2, 3][seed % 3]
    batch = [8, 6, 10][seed % 3]
    lr = 0.02 if fixed else [0.3, 0.4, 0.25][seed % 3]
    anchors, steps, size = 3, 200, 10
    proj = torch.randn(4 * anchors + 4, c, generator=g)   # frozen backbone + xcorr
    model = SiamRPNRegHead(c, w, depth, anchors)
    batches = []
    for _ in range(steps):
        deltas = torch.randn(batch, anchors * 4, size, size, generator=g)
        deltas = F.avg_pool2d(deltas, 3, 1, 1).view(batch, anchors, 4, size, size) * 2.5
        pos = (torch.rand(batch, anchors, size, size, generator=g) < 0.3).float()
        z = torch.cat([deltas.view(batch, -1, size, size),
                       torch.randn(batch, 4, size, size, generator=g)], 1)
        feat = F.relu(torch.einsum("bkhw,kc->bchw", z, proj) * 0.5 + 0.5)   # cached, >= 0
        batches.append((feat, (deltas, pos)))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": rpn_box_loss, "batches": batches,
            "steps": steps}
