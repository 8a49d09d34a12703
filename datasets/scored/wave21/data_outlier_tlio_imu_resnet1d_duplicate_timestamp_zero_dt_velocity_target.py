"""TLIO-style learned inertial odometry: a 1-D ResNet over a gravity-aligned IMU window
(accelerometer + gyroscope, 6 x T) regresses the mean velocity over the window.  The
dataloader builds the target as (p[end] - p[start]) / (t[end] - t[start]) from the
ground-truth poses.

Mechanism: one logged sequence contains a stretch of duplicated ground-truth timestamps
(mocap dropped frames and the logger repeated the last stamp), so for the windows of that
batch t[end] - t[start] == 0 and the target velocity is +-inf / NaN.  The MSE of that batch
is non-finite at the step it appears, in an otherwise calm, converging run.
ORIGIN: None - the fault is in the data, not in a module.
Fix: drop windows whose dt <= 0 (here: the corrupt batch is replaced by a clean one).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "TLIO / RoNIN learned inertial odometry issues: NaN loss traced to duplicated timestamps in ground-truth (dt=0) when computing velocity targets"


class BasicBlock1d(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv1d(c_in, c_out, 5, stride=stride, padding=2, bias=False)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.conv2 = nn.Conv1d(c_out, c_out, 5, padding=2, bias=False)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.down = nn.Sequential(nn.Conv1d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm1d(c_out))
        self.relu = nn.ReLU()

    def forward(self, x):
        h = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(h)) + self.down(x))


class ResNet1d(nn.Module):
    def __init__(self, widths):
        super().__init__()
        layers, c = [], 6
        for w in widths:
            layers.append(BasicBlock1d(c, w, 2))
            c = w
        self.blocks = nn.Sequential(*layers)
        self.head = nn.Linear(c, 3)

    def forward(self, x):
        return self.head(self.blocks(x).mean(-1))


def _window(g, B, T, corrupt=False):
    dt = 0.005
    acc = torch.randn(B, 3, 1, generator=g) + torch.randn(B, 3, T, generator=g) * 0.3
    gyr = torch.randn(B, 3, T, generator=g) * 0.1
    v0 = torch.randn(B, 3, generator=g) * 0.02
    vel = v0[:, :, None] + torch.cumsum(acc, -1) * dt * 5
    pos = torch.cumsum(vel, -1) * dt
    t = torch.arange(T, dtype=torch.float32) * dt
    t = t.expand(B, T).clone()
    if corrupt:
        t[:] = t[:, :1]  # logger repeated the same stamp for the whole window
    disp = pos[:, :, -1] - pos[:, :, 0]
    target = disp / (t[:, -1] - t[:, 0])[:, None]
    x = torch.cat([acc, gyr], 1)
    return x, target


def build(seed: int, fixed: bool = False) -> dict:
    widths, lr, B, T, bad = [((16, 32), 1e-3, 16, 64, 37), ((16, 32, 32), 2e-3, 12, 48, 55), ((24, 48), 2e-3, 12, 64, 23)][seed % 3]
    torch.manual_seed(seed)
    model = ResNet1d(widths)
    g = torch.Generator().manual_seed(3000 + seed)
    steps = 70
    batches = []
    for i in range(steps):
        batches.append(_window(g, B, T, corrupt=(i == bad and not fixed)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
