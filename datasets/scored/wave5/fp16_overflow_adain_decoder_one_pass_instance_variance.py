"""Style-conditioned image decoder with AdaIN layers (tuple input: a content image and a 6-d style
code of foreground/background colours; the style MLP produces the per-channel AdaIN scale and shift).
The AdaIN instance statistics are handwritten in the one-pass form
    s1 = x.sum((2,3)); s2 = (x*x).sum((2,3)); var = (s2 - s1*s1/n) / n
and the whole forward runs under fp16 autocast (a GradScaler would not help: the overflow is in the forward). On a
16x16 map (n = 256) the squared channel sum s1*s1 passes the fp16 maximum 65504 as soon as a channel's
spatial mean exceeds 1.0 in magnitude. At init the conv outputs are close to zero-mean and the loss
falls normally, but as training proceeds the channel means of the conv feeding the second AdaIN
(adain2) drift past that threshold for some image: s1*s1 becomes inf, var = -inf, sqrt(var + eps) is
NaN and the loss is NaN from then on (steps ~15-35).
Fix: compute the statistics in fp32 (x.float() inside the statistics helper), nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "adain2"
SOURCE = ("Huang & Belongie 2017 AdaIN; handwritten instance-norm / GroupNorm statistics under fp16 AMP "
          "(PyTorch autocast only upcasts the built-in norm ops; custom sums stay in half)")


def instance_stats(x, fp32_stats):
    if fp32_stats:
        x = x.float()
    n = x.shape[2] * x.shape[3]
    s1 = x.sum(dim=(2, 3), keepdim=True)
    s2 = (x * x).sum(dim=(2, 3), keepdim=True)
    mean = s1 / n
    var = (s2 - s1 * s1 / n) / n
    return mean, torch.sqrt(var + 1e-5)


class AdaIN(nn.Module):
    def __init__(self, c, style_dim, fp32_stats):
        super().__init__()
        self.affine = nn.Linear(style_dim, 2 * c)
        self.fp32_stats = fp32_stats

    def forward(self, x, s):
        mean, std = instance_stats(x, self.fp32_stats)
        gamma, beta = self.affine(s).chunk(2, dim=1)
        xn = ((x - mean) / std).to(x.dtype)
        return xn * (1 + gamma[:, :, None, None]) + beta[:, :, None, None]


class StyleDecoder(nn.Module):
    def __init__(self, c=8, style_dim=6, fp32_stats=False):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1))
        self.adain1 = AdaIN(c, style_dim, fp32_stats)
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.adain2 = AdaIN(c, style_dim, fp32_stats)
        self.out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, content, style):
        h = F.relu(self.adain1(self.enc(content), style))
        h = F.relu(self.adain2(self.conv(h), style))
        return self.out(h)


def _data(g, n, S=16):
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    content = torch.zeros(n, 1, S, S)
    for i in range(n):
        for _ in range(2):
            cy, cx = (torch.rand(2, generator=g) * S).tolist()
            r = 2 + 3 * float(torch.rand(1, generator=g))
            content[i, 0][((yy - cy) ** 2 + (xx - cx) ** 2) < r ** 2] = 1.0
    style = torch.rand(n, 6, generator=g) * 2 - 1
    fg, bg = style[:, :3, None, None], style[:, 3:, None, None]
    stripes = 0.2 * torch.sin(xx * 1.3)[None, None]
    target = content * (fg + stripes) + (1 - content) * bg
    return content, style, target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = StyleDecoder(fp32_stats=fixed)
    content, style, target = _data(g, 256)
    steps, bs = 80, 8
    batches = []
    for s in range(steps):
        idx = torch.randint(0, content.shape[0], (bs,), generator=g)
        batches.append(((content[idx], style[idx]), target[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
