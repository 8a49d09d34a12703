"""RainNet-style 2D U-Net precipitation nowcaster with a ReLU on the output to keep rain rates non-negative.

Mechanism: the user "enforces physical non-negativity" by ending the network with nn.ReLU() on the
predicted (log) rain rate, and trains with SGD+momentum at lr 0.2-0.3 (a value from a
classification recipe). Most radar pixels are dry (target 0), so after a few overshooting
momentum steps the 1x1 output conv is pushed negative on every pixel; the output ReLU is then dead
(0% active) and passes zero gradient to the whole U-Net: the loss freezes at the
"predict zero rain everywhere" level for the rest of the run.

ORIGIN: `out_act` (the output ReLU that dies first and completely; upstream layers then get no gradient).
Fix: lower lr (0.05) with the same SGD+momentum, same data and architecture.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = "RainNet (Ayzel et al. 2020) U-Net nowcasting; common practice/bug of a ReLU output layer for non-negative precipitation that collapses to all-zero predictions"


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class RainNetLite(nn.Module):
    def __init__(self, t_in, w):
        super().__init__()
        self.enc1 = block(t_in, w)
        self.enc2 = block(w, 2 * w)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec1 = block(3 * w, w)
        self.out = nn.Conv2d(w, 1, 1)
        self.out_act = nn.ReLU()  # rain rate must be >= 0

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        d1 = self.dec1(torch.cat([self.up(e2), e1], 1))
        return self.out_act(self.out(d1)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [8, 12, 6][seed % 3]
    H = [16, 16, 20][seed % 3]
    t_in = [4, 3, 5][seed % 3]
    bs = [8, 6, 8][seed % 3]
    steps = [80, 70, 90][seed % 3]
    lr = 5e-2 if fixed else [0.2, 0.3, 0.25][seed % 3]
    yy, xx = torch.meshgrid(torch.arange(H).float(), torch.arange(H).float(), indexing="ij")
    batches = []
    for _ in range(steps):
        cx = torch.rand(bs, 1, 1, generator=g) * H; cy = torch.rand(bs, 1, 1, generator=g) * H
        vx = torch.randn(bs, 1, 1, generator=g) * 0.5
        amp = 2 + 8 * torch.rand(bs, 1, 1, generator=g)
        frames = []
        for k in range(t_in + 1):
            d2 = (xx - cx - vx * k) ** 2 + (yy - cy) ** 2
            r = amp * torch.exp(-d2 / 10.0)
            frames.append(torch.where(r > 0.3, r, torch.zeros_like(r)))
        seq = torch.log1p(torch.stack(frames, 1))  # log rain rate, dry = 0
        batches.append((seq[:, :t_in], seq[:, t_in]))
    model = RainNetLite(t_in, w)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
