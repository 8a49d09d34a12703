"""Learned inverse kinematics for a 3-link planar arm: an MLP maps the (standardised) target
end-effector pose (x, y, cos phi, sin phi) to three joint angles, kept inside the URDF joint limits
by a sigmoid squash q = lo + (hi - lo) * sigmoid(z); the loss is the forward-kinematics pose error
(positions in metres plus orientation as cos/sin), so no IK labels are needed. Because the URDF
lists limits in degrees, the port inserted the rad->deg factor 180/pi on the logits, INSIDE the
sigmoid: sigmoid(z * 57.3). The sigmoid pre-activations are ~57x too large, nearly every joint sits
on a limit where sigmoid' ~ 0, so the FK error back-propagates almost nothing into the network and
momentum SGD leaves the loss on its plateau (finite, no NaN). Fixed: the same network with
sigmoid(z) (limits converted to radians outside the squash), i.e. pre-activations at natural
scale."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "ik_head"
SOURCE = ("joint-limit sigmoid squash in a self-supervised (FK-loss) IK network with a unit "
          "conversion applied to the logits; sigmoid saturation (cf. Bensadoun et al. 2022 'Neural IK')")

LINKS = (0.4, 0.3, 0.2)
LO = torch.tensor([-170.0, -120.0, -120.0]) * math.pi / 180
HI = torch.tensor([170.0, 120.0, 120.0]) * math.pi / 180


def forward_kinematics(q):
    a1 = q[:, 0]; a2 = a1 + q[:, 1]; a3 = a2 + q[:, 2]
    x = LINKS[0] * torch.cos(a1) + LINKS[1] * torch.cos(a2) + LINKS[2] * torch.cos(a3)
    y = LINKS[0] * torch.sin(a1) + LINKS[1] * torch.sin(a2) + LINKS[2] * torch.sin(a3)
    return torch.stack([x, y, torch.cos(a3), torch.sin(a3)], 1)


class NeuralIK(nn.Module):
    def __init__(self, logit_scale, hidden=64):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.ik_head = nn.Linear(hidden, 3)
        self.logit_scale = logit_scale

    def forward(self, pose_n):
        z = self.ik_head(self.trunk(pose_n)) * self.logit_scale
        q = LO + (HI - LO) * torch.sigmoid(z)
        return forward_kinematics(q)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = NeuralIK(logit_scale=1.0 if fixed else 180.0 / math.pi)
    N = 4096
    q_true = LO * 0.6 + (HI - LO) * 0.6 * torch.rand(N, 3, generator=g)
    pose = forward_kinematics(q_true)
    pose_n = (pose - pose.mean(0)) / pose.std(0)
    steps, B = 150, 128
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, N, (B,), generator=g)
        batches.append((pose_n[idx], pose[idx]))

    def loss_fn(pred_pose, target_pose):
        w = torch.tensor([4.0, 4.0, 1.0, 1.0])          # metres weighted up vs orientation
        return (((pred_pose - target_pose) ** 2) * w).sum(1).mean()

    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
