"""ConvGRU radar nowcaster (Shi et al. 2017 TrajGRU/ConvGRU style) with a Z-R conversion inside forward, trained under fp16 autocast without care.

Mechanism: the ConvGRU encoder and the 1x1 head predict the next reflectivity frame in dBZ. To
train on rain rate (what hydrologists score), forward converts dBZ -> Z = 10**(dBZ/10) -> rain rate
R = (Z/200)**(1/1.6) (Marshall-Palmer). Under torch.autocast(float16) the head output is fp16, so
Z is computed in half precision: any pixel above 48.2 dBZ gives Z > 65504 = inf, R = inf, loss = inf.
Convective cells in the targets (55-68 dBZ) pull the de-normalised predictions (head(h) * 60) past
that point within the first couple of Adam steps.

ORIGIN: `zr` (the ZRConversion module where the first inf appears).
Fix: do the Z-R conversion in float32 (`dbz.float()` inside ZRConversion), everything else unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "zr"
SOURCE = "Marshall-Palmer Z-R conversion in radar nowcasting code (pysteps/RainNet pipelines) combined with torch AMP float16; fp16 max 65504"


class ConvGRUCell(nn.Module):
    def __init__(self, cin, ch):
        super().__init__()
        self.gates = nn.Conv2d(cin + ch, 2 * ch, 3, padding=1)
        self.cand = nn.Conv2d(cin + ch, ch, 3, padding=1)

    def forward(self, x, h):
        z, r = torch.sigmoid(self.gates(torch.cat([x, h], 1))).chunk(2, 1)
        c = torch.tanh(self.cand(torch.cat([x, r * h], 1)))
        return (1 - z) * h + z * c


class ZRConversion(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, dbz):
        if self.fp32:
            dbz = dbz.float()
        z = torch.pow(10.0, dbz / 10.0)
        return torch.pow(z / 200.0, 1.0 / 1.6)


class Nowcaster(nn.Module):
    def __init__(self, ch, fp32):
        super().__init__()
        self.ch = ch
        self.cell = ConvGRUCell(1, ch)
        self.head = nn.Conv2d(ch, 1, 1)
        nn.init.constant_(self.head.bias, 25.0 / 60.0)  # climatological reflectivity (normalised)
        self.zr = ZRConversion(fp32)

    def forward(self, x):
        b, t, _, hh, ww = x.shape
        h = x.new_zeros(b, self.ch, hh, ww)
        for i in range(t):
            h = self.cell(x[:, i] / 60.0, h)
        return self.zr(self.head(h) * 60.0)  # back to dBZ


def _storms(g, b, t, H, peak):
    yy, xx = torch.meshgrid(torch.arange(H).float(), torch.arange(H).float(), indexing="ij")
    cx = torch.rand(b, 1, 1, generator=g) * H; cy = torch.rand(b, 1, 1, generator=g) * H
    vx = 0.2 * torch.randn(b, 1, 1, generator=g); vy = 0.2 * torch.randn(b, 1, 1, generator=g)
    amp = peak - 10 * torch.rand(b, 1, 1, generator=g)
    frames = []
    for k in range(t + 1):
        d2 = (xx - cx - vx * k) ** 2 + (yy - cy - vy * k) ** 2
        frames.append((amp * torch.exp(-d2 / 40.0) + 5 * torch.rand(b, H, H, generator=g)).clamp(0, 70))
    seq = torch.stack(frames, 1).unsqueeze(2)
    return seq[:, :t], seq[:, t]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    ch = [8, 12, 8][seed % 3]
    H = [16, 12, 16][seed % 3]
    t = [4, 5, 3][seed % 3]
    bs = [6, 8, 6][seed % 3]
    steps = [60, 50, 70][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    peak = [66.0, 64.0, 68.0][seed % 3]
    batches = []
    for _ in range(steps):
        x, y = _storms(g, bs, t, H, peak)
        ry = torch.pow(torch.pow(10.0, y / 10.0) / 200.0, 1 / 1.6)
        batches.append((x, ry))
    model = Nowcaster(ch, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, target):
        # log rain rate: skill on light and heavy rain alike
        return nn.functional.mse_loss(torch.log(out.float() + 0.01), torch.log(target + 0.01))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
