"""Image inpainting network built from partial convolutions (Liu et al. 2018: each layer only sees
valid pixels, renormalises by the valid fraction of its window and outputs exactly 0 where its window
contained no valid pixel, shrinking the hole by one pixel per 3x3 layer), followed by a ProGAN-style
PixelNorm x / sqrt(mean_c(x^2)) whose epsilon was removed "because features are never all zero".
Inputs are a tuple (image * valid_mask, valid_mask). Most training masks are thin scratches
(<= 4 px of combined width) that the two partial convs close completely, so the run is calm and the
loss falls. At step 40 the mask generator emits a few large boxes (10-12 px) - and now and then two
scratches stacked against the zero-padded image border already make a hole that cannot be closed: after
two layers the centre pixels of such a hole still have all-zero feature vectors, PixelNorm (pnorm)
computes 0 / sqrt(0) = NaN there and the loss and every gradient are NaN from that step on.
Fix: PixelNorm with eps = 1e-8 inside the square root."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "pnorm"
SOURCE = ("Karras et al. 2018 (ProGAN) PixelNorm uses eps=1e-8; Liu et al. 2018 'Image Inpainting for "
          "Irregular Holes Using Partial Convolutions' (zero features inside large holes)")


class PartialConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bias = nn.Parameter(torch.zeros(1, cout, 1, 1))
        self.register_buffer("ones", torch.ones(1, 1, 3, 3))

    def forward(self, x, m):
        with torch.no_grad():
            cnt = F.conv2d(m, self.ones, padding=1)
            m_new = (cnt > 0).float()
            ratio = 9.0 / cnt.clamp_min(1.0) * m_new
        out = self.conv(x * m) * ratio + self.bias * m_new
        return out, m_new


class PixelNorm(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(dim=1, keepdim=True) + self.eps)


class Inpainter(nn.Module):
    def __init__(self, c=16, eps=0.0):
        super().__init__()
        self.pconv1 = PartialConv(2, c)
        self.pconv2 = PartialConv(c, c)
        self.pnorm = PixelNorm(eps)
        self.dec = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(c, 1, 3, padding=1))

    def forward(self, img_masked, valid):
        h, m = self.pconv1(torch.cat([img_masked, valid], 1), valid)
        h, m = self.pconv2(F.leaky_relu(h, 0.2), m)
        h = self.pnorm(F.leaky_relu(h, 0.2))
        return self.dec(h)


def _images(g, n, S=24):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, S), torch.linspace(0, 1, S), indexing="ij")
    a = torch.rand(n, 4, 1, 1, generator=g)
    img = 0.5 + 0.3 * torch.sin(6 * a[:, 0] * xx + 4 * a[:, 1] * yy + 6 * a[:, 2]) * (0.5 + a[:, 3])
    return img[:, None]


def _mask(g, bs, S, large):
    """Usual masks: two thin scratches (1-2 px thick, so at most 4 px of combined width) that two 3x3
    partial convs close. At the 'large' step, three images also get one 10-12 px box."""
    valid = torch.ones(bs, 1, S, S)
    for i in range(bs):
        for _ in range(2):
            t = int(torch.randint(1, 3, (1,), generator=g)); L = int(torch.randint(4, 13, (1,), generator=g))
            r, c = int(torch.randint(0, S - L, (1,), generator=g)), int(torch.randint(0, S - L, (1,), generator=g))
            if bool(torch.rand(1, generator=g) < 0.5):
                valid[i, 0, r:r + t, c:c + L] = 0.0
            else:
                valid[i, 0, r:r + L, c:c + t] = 0.0
        if large and i < 3:
            size = int(torch.randint(10, 13, (1,), generator=g))
            r, c = int(torch.randint(0, S - size, (1,), generator=g)), int(torch.randint(0, S - size, (1,), generator=g))
            valid[i, 0, r:r + size, c:c + size] = 0.0
    return valid


def loss_fn(out, target):
    return F.l1_loss(out, target)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Inpainter(eps=1e-8 if fixed else 0.0)
    imgs = _images(g, 256)
    steps, bs, large_step = 100, 8, 40
    batches = []
    for s in range(steps):
        idx = torch.randint(0, imgs.shape[0], (bs,), generator=g)
        x = imgs[idx]
        valid = _mask(g, bs, x.shape[-1], large=(s == large_step))
        batches.append(((x * valid, valid), x))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
