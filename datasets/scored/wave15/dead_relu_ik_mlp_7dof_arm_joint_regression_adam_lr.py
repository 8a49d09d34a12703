"""Learned inverse kinematics for a 7-DoF arm: MLP from end-effector pose (position +
6D rotation representation) to the 7 joint angles (centred on the joint-range midpoints),
trained with Adam on samples from forward kinematics (MSE).

Mechanism: lr=0.1-0.3 copied from a "fast" SGD config into Adam for a plain ReLU MLP.  The
first Adam steps move each bias by ~lr and each first-layer weight by ~lr per step in the sign
of its gradient; the first hidden layer's pre-activations drift negative for the whole input
distribution, its ReLU units die permanently (zero output, zero gradient), the deeper layers
see a constant and the prediction collapses to the mean joint configuration.  Joint targets
are centred, so the loss is stuck at its starting level.

ORIGIN: ``net.1`` -- the first ReLU is where units die first; later layers are starved of input.
Fix: Adam lr 1e-3 (fixed=True).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("IK-regression baselines for Franka/KUKA arms (e.g. IKFlow comparisons); common "
          "'network outputs the same joints for every pose' reports with too-high Adam lr.")


def dh_fk(q):
    # simplified 7-DoF chain: alternating z/y rotations, fixed link offsets
    B = q.shape[0]
    R = torch.eye(3).expand(B, 3, 3)
    p = torch.zeros(B, 3)
    links = [0.33, 0.0, 0.32, 0.0, 0.38, 0.0, 0.1]
    for i in range(7):
        c, s = torch.cos(q[:, i]), torch.sin(q[:, i])
        o, z = torch.ones_like(c), torch.zeros_like(c)
        if i % 2 == 0:
            Ri = torch.stack([c, -s, z, s, c, z, z, z, o], -1).view(B, 3, 3)
        else:
            Ri = torch.stack([c, z, s, z, o, z, -s, z, c], -1).view(B, 3, 3)
        R = R @ Ri
        p = p + R[:, :, 2] * links[i] + R[:, :, 0] * 0.05
    return torch.cat([p, R[:, :, 0], R[:, :, 1]], -1)


class IKNet(nn.Module):
    def __init__(self, h, depth):
        super().__init__()
        layers = [nn.Linear(9, h), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(h, h), nn.ReLU()]
        layers.append(nn.Linear(h, 7))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=128, depth=3, lr=3e-1, bs=128, steps=120),
           dict(h=256, depth=2, lr=1e-1, bs=64, steps=100),
           dict(h=96, depth=4, lr=1e-1, bs=256, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 5)
    model = IKNet(cfg["h"], cfg["depth"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        q = (torch.rand(cfg["bs"], 7, generator=g) * 2 - 1) * 0.8      # narrow workspace slice
        pose = dh_fk(q)
        pose[:, :3] = pose[:, :3] + torch.tensor([0.9, 0.7, 0.75])     # base -> table-corner frame (m)
        pose[:, 3:] = (pose[:, 3:] + 1.0) * 0.5                         # 6D rotation packed into [0, 1]
        batches.append((pose, q / 0.8))                                 # joints scaled to [-1, 1]
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
