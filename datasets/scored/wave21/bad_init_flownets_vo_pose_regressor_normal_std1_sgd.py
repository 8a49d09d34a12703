"""FlowNetS-style visual-odometry regressor: two stacked RGB frames (6 channels) -> strided
conv encoder -> global average pool -> FC -> relative pose (tx, ty, tz, roll, pitch, yaw),
no BatchNorm.  The user's weight-init helper calls `nn.init.normal_(m.weight)` on every
Conv2d, i.e. mean 0 and std 1 (the std argument was forgotten).

Mechanism: with fan-in 54..288 a std-1 kernel multiplies the activation RMS by
~sqrt(fan_in/2) = 5..12 per conv, so after four convs the features are ~1e4 times the input
scale from step 0; the pose output and the MSE are huge, the SGD step on the FC/conv weights
is huge, and the loss goes to inf/NaN within a few steps.
ORIGIN: the first conv (encoder.0), where the geometric growth starts.
Fix: kaiming_normal_(weight, nonlinearity='relu') as FlowNet's code intends.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = "DeepVO / FlowNetS reimplementation forum threads: weights_init using nn.init.normal_(m.weight) without std, loss explodes to nan on KITTI"


class VONet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(6, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(2 * c, 4 * c, 3, stride=1, padding=1), nn.ReLU(),
        )
        self.fc = nn.Sequential(nn.Linear(4 * c, 64), nn.ReLU(), nn.Linear(64, 6))

    def forward(self, x):
        h = self.encoder(x).mean(dim=(2, 3))
        return self.fc(h)


def _make_batch(g, B, H):
    f1 = torch.rand(B, 3, H, H, generator=g)
    shift = torch.randint(-2, 3, (B, 2), generator=g)
    gain = 0.6 + 0.8 * torch.rand(B, 3, 1, 1, generator=g)
    f2 = torch.stack([torch.roll(f1[i], shifts=(int(shift[i, 0]), int(shift[i, 1])), dims=(1, 2)) for i in range(B)]) * gain
    x = torch.cat([f1, f2], 1) - 0.5  # centred pixels
    # photometric proxy targets (exposure change drives the pose residual in this toy rig)
    d = (f2.mean(dim=(2, 3)) - f1.mean(dim=(2, 3))) * 4.0
    y = torch.cat([d, d[:, :2] - d[:, 2:], d.sum(1, keepdim=True)], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c, lr, B, H = [(16, 0.05, 16, 20), (12, 0.08, 12, 16), (16, 0.06, 12, 20)][seed % 3]
    torch.manual_seed(seed)
    model = VONet(c)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)  # std argument forgotten -> std 1
    g = torch.Generator().manual_seed(2000 + seed)
    steps = 80
    batches = [_make_batch(g, B, H) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
