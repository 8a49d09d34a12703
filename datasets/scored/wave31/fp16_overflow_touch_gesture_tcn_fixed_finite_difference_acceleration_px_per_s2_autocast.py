"""Touch-gesture recognition (tap, long-press, four swipe directions, scroll-drag, fling) from raw
120 Hz touch traces: a fixed 'kinematics' layer (Conv1d with frozen finite-difference kernels)
turns the pixel trace into velocity (px/s) and acceleration (px/s^2), the features are
log-compressed (sign * log1p|x|), and a dilated TCN + global average pool + linear layer
classifies the gesture. Mixed precision: forward and loss under torch.autocast(float16) with a
GradScaler. Batches are per-user sessions (on-device personalisation), cross-entropy, Adam.

Mechanism: the kinematics conv runs in float16 under autocast (convolutions are on autocast's
half-precision list), so the per-frame differences and their conversion to physical units
(division by dt and dt^2, Python scalars, which keep float16) are float16 tensors. The log
compression was meant to make the huge physical units harmless, but it is applied after the
conversion: dividing the second difference by dt^2 = (1/120 s)^2 puts the accelerations of
ordinary swipes at 1e3-4e4 px/s^2, fine, while the sessions of users who fling (peak speeds of
~10-15k px/s reached in ~30 ms) produce ~1e5-2e5 px/s^2, past float16's 65504. The acceleration
channels become inf, the TCN turns inf - inf into NaN and the loss of that session's batch is
non-finite. The GradScaler cannot help: the overflow is in the forward pass, not in the
gradients.

ORIGIN: "kinematics", the frozen finite-difference layer whose float16 output overflows.

Fix: run the kinematics layer in float32 (autocast disabled for that op, input cast to float),
which is what the log compression assumed; everything else stays in float16 autocast.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "kinematics"
SOURCE = ("torch.autocast runs conv1d in float16 (max 65504); physical-unit derivative features "
          "(px/s^2) computed inside the model overflow; PyTorch AMP docs recommend fp32 for "
          "ops with large dynamic range (torch.autocast(enabled=False) regions)")

DT = 1.0 / 120.0
CLASSES = ["tap", "long_press", "swipe_l", "swipe_r", "swipe_u", "swipe_d", "scroll", "fling"]


class Kinematics(nn.Module):
    """Frozen finite differences: channels = x, y, vx, vy, ax, ay (px, px/s, px/s^2)."""

    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32
        k = torch.zeros(6, 2, 3)
        for c in range(2):
            k[c, c] = torch.tensor([0.0, 1.0, 0.0])
            k[2 + c, c] = torch.tensor([-0.5, 0.0, 0.5])
            k[4 + c, c] = torch.tensor([1.0, -2.0, 1.0])
        self.register_buffer("kernel", k)

    def _diff(self, xy):
        d = nn.functional.conv1d(xy, self.kernel)  # 'valid': T-2 frames
        # per-frame differences -> physical units
        return torch.cat([d[:, :2], d[:, 2:4] / DT, d[:, 4:] / DT ** 2], 1)

    def forward(self, xy):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._diff(xy.float())
        return self._diff(xy)


class GestureTCN(nn.Module):
    def __init__(self, c, n_blocks, fp32_kinematics):
        super().__init__()
        self.kinematics = Kinematics(fp32_kinematics)
        layers, c_in = [], 6
        for b in range(n_blocks):
            layers += [nn.Conv1d(c_in, c, 3, padding=2 ** b, dilation=2 ** b), nn.ReLU()]
            c_in = c
        self.tcn = nn.Sequential(*layers)
        self.cls = nn.Linear(c, len(CLASSES))

    def forward(self, xy):
        k = self.kinematics(xy)
        k = torch.sign(k) * torch.log1p(k.abs())       # log-compress the physical units
        return self.cls(self.tcn(k).mean(-1))


def _gesture(g, cls, speed, t_len):
    t = torch.arange(t_len).float() * DT
    x0 = 200 + 680 * torch.rand(1, generator=g); y0 = 400 + 1200 * torch.rand(1, generator=g)
    jitter = 0.15 * torch.randn(2, t_len, generator=g)  # OS-filtered touch noise
    if cls in (0, 1):                                 # tap / long press: (almost) stationary
        dur = 0.08 if cls == 0 else 0.5
        mv = torch.zeros(2, t_len)
        alive = (t <= dur).float()
        return torch.stack([x0 + mv[0], y0 + mv[1]]) + jitter * alive
    dirs = {2: (-1, 0), 3: (1, 0), 4: (0, -1), 5: (0, 1), 6: (0, 1), 7: (0, -1)}
    dx, dy = dirs[cls]
    if cls == 6:
        vmax, tau = 600.0 * speed, 0.25                # slow scroll drag
    elif cls == 7:
        vmax, tau = 2500.0 * speed, 0.03               # fling
    else:
        vmax, tau = 1500.0 * speed, 0.09               # swipe
    # smooth minimum-jerk-like speed profile
    v = vmax * torch.sigmoid((t - 3 * tau) / tau) * torch.sigmoid((12 * tau - t) / tau)
    s = torch.cumsum(v, 0) * DT
    return torch.stack([x0 + dx * s, y0 + dy * s]) + jitter


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    c = [32, 48, 32][seed % 3]
    n_blocks = [3, 3, 4][seed % 3]
    bs = [24, 32, 16][seed % 3]
    lr = [2e-3, 1.5e-3, 2e-3][seed % 3]
    fling_user_session = [45, 70, 95][seed % 3]     # first session of a fast-flinging user
    t_len = 48
    steps = 130
    batches = []
    for s in range(steps):
        # each batch is one user's session; the user's motor speed scales every movement
        speed = 0.6 + 0.4 * float(torch.rand(1, generator=g))
        if s >= fling_user_session and (s - fling_user_session) % 9 == 0:
            speed = 4.0 + 2.0 * float(torch.rand(1, generator=g))
        y = torch.randint(0, len(CLASSES), (bs,), generator=g)
        xy = torch.stack([_gesture(g, int(cl), speed * (0.85 + 0.3 * float(torch.rand(1, generator=g))), t_len)
                          for cl in y])
        batches.append((xy, y))
    torch.manual_seed(seed)
    model = GestureTCN(c, n_blocks, fp32_kinematics=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": torch.amp.GradScaler("cpu")}
