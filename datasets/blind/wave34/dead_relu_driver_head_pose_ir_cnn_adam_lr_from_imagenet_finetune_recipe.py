"""Driver-monitoring head-pose regressor: a small CNN on 32x32 near-infrared cabin-camera face
crops that regresses (yaw, pitch) of the driver's head, trained from scratch with Adam and an
L1 loss (angles in radians).

Mechanism: the lr was taken from a recipe written for a BatchNorm backbone, and this BN-free
head is trained with Adam at lr 5e-2 - 8e-2.  The first Adam steps move every weight by ~lr in
the sign direction of its gradient; the biases and kernels of the ReLU layers are pushed so far
negative that the pre-activations become negative for every crop.  Once a ReLU unit is dead it
gets exactly zero gradient and never revives; within ~20 steps every unit of the fully connected
ReLU is dead (and most of the conv ReLUs), the network outputs a constant and the L1 loss
plateaus at the mean absolute deviation of the head angles (no inf/NaN - a stall).

ORIGIN: ``head.2`` - the ReLU after the 64-unit fully connected layer: all of its units die, and
with them every gradient to the conv stack below, so this is where the training signal stops.

Fix: an Adam lr that a BN-free ReLU head tolerates (the recipe lr / 10); same model, data and
steps.  (Swapping to LeakyReLU at the recipe lr keeps units alive but is itself unstable at that
lr, so the lr that kills the units is the thing to correct.)
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.2"
SOURCE = ("Known pattern: 'dying ReLU' under a too-aggressive Adam lr (CS231n notes: 'as much as "
          "40% of your network can be dead'); head-pose estimation from IR driver-monitoring crops "
          "(e.g. DriveAHead / DD-Pose style regressors)")


class HeadPoseCNN(nn.Module):
    def __init__(self, c, act):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), act(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1), act(), nn.MaxPool2d(2),
            nn.Conv2d(2 * c, 2 * c, 3, padding=1), act(), nn.AdaptiveAvgPool2d(4))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * c * 16, 64), act(), nn.Linear(64, 2))

    def forward(self, x):
        return self.head(self.features(x))


def _render(yaw, pitch, g):
    n = yaw.shape[0]
    ax = torch.linspace(-1, 1, 32)
    yy, xx = torch.meshgrid(ax, ax, indexing="ij")
    cx = (0.6 * yaw)[:, None, None]
    cy = (0.6 * pitch)[:, None, None]
    face = torch.exp(-((xx - cx * 0.5) ** 2 + (yy - cy * 0.5) ** 2) / 0.35)
    nose = torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 0.02)
    eyes = torch.exp(-((xx - cx * 0.8 + 0.25) ** 2 + (yy - cy * 0.8 + 0.2) ** 2) / 0.01) + \
        torch.exp(-((xx - cx * 0.8 - 0.25) ** 2 + (yy - cy * 0.8 + 0.2) ** 2) / 0.01)
    img = face + 0.8 * nose - 0.6 * eyes + 0.1 * torch.randn(n, 32, 32, generator=g)
    return img[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [8, 12, 16][seed % 3]
    lr = [0.06, 0.05, 0.08][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 150
    if fixed:
        lr = lr / 10
    model = HeadPoseCNN(c, nn.ReLU)

    batches = []
    for _ in range(steps):
        yaw = (torch.rand(bs, generator=g) * 2 - 1) * 1.0     # +-57 deg
        pitch = (torch.rand(bs, generator=g) * 2 - 1) * 0.6
        batches.append((_render(yaw, pitch, g), torch.stack([yaw, pitch], 1)))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
