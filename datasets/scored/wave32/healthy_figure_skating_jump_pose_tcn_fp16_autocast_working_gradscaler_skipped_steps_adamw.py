"""Figure-skating jump technique scoring (grade of execution, standardised) from a 2-D pose
sequence (17 keypoints x (x, y) per frame, root-centred and scale-normalised): a temporal
convolution network with GELU and global average pooling, Huber loss, AdamW, trained under fp16
autocast with a working GradScaler.

Why it looks alarming but is healthy: the GradScaler starts at scale 2^16 (and this run at
2^20 - a value copied from a larger model), so the first backward passes overflow in the fp16
activation gradients; the scaler detects the inf gradients, skips those optimizer steps (the
parameters do not change at all - exactly-zero updates) and halves its scale until the
gradients fit.  The loss is computed in fp16 activations with occasional rounding noise.  After
the first few skipped steps training proceeds normally and the loss falls.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs (torch.amp.GradScaler: 'skips optimizer.step() if gradients contain "
          "infs or NaNs' and backs off the scale); skating/diving action-quality assessment "
          "from pose sequences (e.g. MIT-Skating, Pirsiavash et al. 2014).")


class SkatingTCN(nn.Module):
    def __init__(self, c_in, ch, depth):
        super().__init__()
        layers, c = [], c_in
        for i in range(depth):
            layers += [nn.Conv1d(c, ch, 5, padding=2 * (i + 1), dilation=i + 1), nn.GELU()]
            c = ch
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Linear(ch, 1)

    def forward(self, x):                     # (B, 34, T)
        return self.head(self.tcn(x).mean(-1)).squeeze(-1)


def _data(g, n, T):
    t = torch.linspace(0, 1, T)
    base = torch.randn(34, generator=g) * 0.3
    rot_speed = torch.rand(n, 1, generator=g) * 2 + 1           # revolutions tightness
    height = torch.rand(n, 1, generator=g)
    landing = torch.randn(n, 1, generator=g)
    phase = 2 * torch.pi * rot_speed * t                         # (n, T)
    ang = torch.arange(17).float() / 17 * 2 * torch.pi
    xs = torch.cos(phase.unsqueeze(1) + ang.view(1, 17, 1)) * (0.5 + 0.3 * height.unsqueeze(1))
    ys = torch.sin(ang).view(1, 17, 1) + height.unsqueeze(1) * torch.sin(torch.pi * t)
    ys = ys + 0.3 * landing.unsqueeze(1) * (t > 0.8).float()
    x = torch.cat([xs, ys], 1) + base.view(1, 34, 1) + 0.05 * torch.randn(n, 34, T, generator=g)
    goe = 1.0 * height.squeeze(1) + 0.5 * rot_speed.squeeze(1) - 0.7 * landing.squeeze(1).abs()
    goe = goe + 0.1 * torch.randn(n, generator=g)
    return x, (goe - goe.mean()) / goe.std()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    ch = [40, 32, 36][seed % 3]
    depth = [3, 4, 3][seed % 3]
    lr = [3e-3, 4e-3, 3e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 100
    T = 40
    model = SkatingTCN(34, ch, depth)
    x, y = _data(g, bs * steps, T)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 20)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=1.0), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
