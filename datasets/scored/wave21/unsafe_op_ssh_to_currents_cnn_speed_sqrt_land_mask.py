"""CNN emulator of ocean surface currents from sea-surface height, trained on current SPEED.

Mechanism: the network predicts (u, v) from SSH + wind-stress patches, multiplies them by the
land/sea mask inside forward (land points forced to exactly 0), and a `CurrentSpeed` module returns
|U| = sqrt(u^2 + v^2), compared with drifter/altimetry-derived speed. On land points u = v = 0
exactly, so d sqrt / d(u^2+v^2) = 1/(2*0) = inf, multiplied by the zero from the mask -> NaN
gradients on the first backward; all weights become NaN after the first optimizer step.
The forward is perfectly calm (finite loss at step 0).

ORIGIN: `speed` (the CurrentSpeed module that applies sqrt at zero).
Fix: sqrt(u^2 + v^2 + eps) (eps=1e-8) in CurrentSpeed.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "speed"
SOURCE = "PyTorch forum / GitHub issues: torch.norm / sqrt gradient is NaN at zero (e.g. pytorch#2421); masked land points in ocean ML emulators"


class CurrentSpeed(nn.Module):
    def __init__(self, eps=0.0):
        super().__init__()
        self.eps = eps

    def forward(self, uv):
        return torch.sqrt(uv[:, 0] ** 2 + uv[:, 1] ** 2 + self.eps)


class SSHCurrentNet(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.GELU(),
            nn.Conv2d(width, width, 3, padding=1), nn.GELU(),
            nn.Conv2d(width, width, 3, padding=1), nn.GELU(),
        )
        self.uv = nn.Conv2d(width, 2, 1)
        self.speed = CurrentSpeed(eps)

    def forward(self, x):
        field, mask = x[:, :3], x[:, 3:4]
        uv = self.uv(self.enc(field)) * mask
        return self.speed(uv)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [16, 12, 20][seed % 3]
    H = [16, 20, 16][seed % 3]
    bs = [8, 6, 10][seed % 3]
    steps = [60, 90, 70][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    yy, xx = torch.meshgrid(torch.linspace(0, 1, H), torch.linspace(0, 1, H), indexing="ij")
    land = ((xx < 0.2 + 0.1 * seed) | ((yy - 0.7) ** 2 + (xx - 0.8) ** 2 < 0.03)).float()
    mask = 1.0 - land
    batches = []
    for _ in range(steps):
        ssh = torch.randn(bs, 1, H, H, generator=g)
        ssh = torch.nn.functional.avg_pool2d(ssh, 5, 1, 2) * 3
        tx = torch.randn(bs, 1, 1, 1, generator=g) * torch.ones(1, 1, H, H)
        ty = torch.randn(bs, 1, 1, 1, generator=g) * torch.ones(1, 1, H, H)
        # geostrophic currents ~ grad(ssh) rotated + Ekman part
        dy = torch.zeros_like(ssh); dx = torch.zeros_like(ssh)
        dy[..., 1:, :] = ssh[..., 1:, :] - ssh[..., :-1, :]
        dx[..., :, 1:] = ssh[..., :, 1:] - ssh[..., :, :-1]
        u = -dy + 0.1 * tx; v = dx + 0.1 * ty
        spd = (torch.sqrt(u ** 2 + v ** 2) * mask).squeeze(1)
        x = torch.cat([ssh, tx, ty, mask.expand(bs, 1, H, H)], 1)
        batches.append((x, spd))
    model = SSHCurrentNet(width, 1e-8 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
