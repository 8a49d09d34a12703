"""HEALTHY hard negative: an ESRGAN RRDB super-resolution generator (PSNR-oriented L1
pre-training stage) working directly in 0-255 pixel units, EDSR-style, with no normalisation
layer anywhere -- and occasional batches of dense foliage-like texture that spike the loss.

What looks alarming, and why it is benign:
* Inputs and targets are raw 8-bit intensities (EDSR's ``rgb_range = 255`` convention: only
  the dataset RGB mean is subtracted by a frozen 1x1 ``MeanShift`` conv and added back at the
  end; nothing is divided by a std). The first L1 losses are ~30-60 (pixel units) and the
  weight gradients of the first convs are correspondingly large. But the loss is L1 (its
  gradient w.r.t. each output pixel is +-1/N whatever the scale) and the optimiser is Adam
  (update ~ lr whatever the gradient scale), so the scale is harmless: this is exactly how
  EDSR/RCAN/ESRGAN-family code trains.
* No BatchNorm, 23-conv-deep (per RRDB, dense concatenations) residual-in-residual trunk. It
  stays stable by design: each dense block's output and each RRDB's output are scaled by
  beta = 0.2 before the residual add, and the block convs get ESRGAN's He init scaled by 0.1.
* Every 25-45 steps (seed-dependent) a batch of dense high-frequency texture (grass/foliage
  crops) arrives: its L1 is about twice the running loss -- a spike that looks like a data
  outlier or an instability -- and the next ordinary batches are back on the curve. The
  texture crops are genuine, in-range images; nothing needs fixing.

CAUSE = "healthy", ORIGIN = None; build(seed, fixed) returns the same run for both.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("ESRGAN (Wang et al. 2018) RRDBNet with residual scaling 0.2 and 0.1-scaled init, "
          "PSNR-oriented L1 pre-training with Adam(2e-4, betas 0.9/0.99); EDSR's rgb_range=255 "
          "MeanShift convention; DIV2K/Flickr2K-style crops where foliage patches spike the L1")

SCALE = 2
LR_SIZE = 12
RGB_MEAN = (0.4488, 0.4371, 0.4040)


class MeanShift(nn.Conv2d):
    def __init__(self, sign, rgb_range=255.0):
        super().__init__(3, 3, 1)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1)
        self.bias.data = sign * rgb_range * torch.tensor(RGB_MEAN)
        for p in self.parameters():
            p.requires_grad = False


class ResidualDenseBlock(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.conv1 = nn.Conv2d(nf, gc, 3, 1, 1)
        self.conv2 = nn.Conv2d(nf + gc, gc, 3, 1, 1)
        self.conv3 = nn.Conv2d(nf + 2 * gc, gc, 3, 1, 1)
        self.conv4 = nn.Conv2d(nf + 3 * gc, gc, 3, 1, 1)
        self.conv5 = nn.Conv2d(nf + 4 * gc, nf, 3, 1, 1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
                m.weight.data *= 0.1
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x1 = F.leaky_relu(self.conv1(x), 0.2)
        x2 = F.leaky_relu(self.conv2(torch.cat((x, x1), 1)), 0.2)
        x3 = F.leaky_relu(self.conv3(torch.cat((x, x1, x2), 1)), 0.2)
        x4 = F.leaky_relu(self.conv4(torch.cat((x, x1, x2, x3), 1)), 0.2)
        x5 = self.conv5(torch.cat((x, x1, x2, x3, x4), 1))
        return x5 * 0.2 + x


class RRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__()
        self.rdb1 = ResidualDenseBlock(nf, gc)
        self.rdb2 = ResidualDenseBlock(nf, gc)
        self.rdb3 = ResidualDenseBlock(nf, gc)

    def forward(self, x):
        return self.rdb3(self.rdb2(self.rdb1(x))) * 0.2 + x


class RRDBNet(nn.Module):
    def __init__(self, nf, gc, nb):
        super().__init__()
        self.sub_mean = MeanShift(-1)
        self.conv_first = nn.Conv2d(3, nf, 3, 1, 1)
        self.body = nn.Sequential(*[RRDB(nf, gc) for _ in range(nb)])
        self.conv_body = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_up1 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_hr = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_last = nn.Conv2d(nf, 3, 3, 1, 1)
        self.add_mean = MeanShift(+1)

    def forward(self, x):
        x = self.sub_mean(x)
        feat = self.conv_first(x)
        feat = feat + self.conv_body(self.body(feat))
        feat = F.leaky_relu(self.conv_up1(F.interpolate(feat, scale_factor=SCALE, mode="nearest")), 0.2)
        out = self.conv_last(F.leaky_relu(self.conv_hr(feat), 0.2))
        return self.add_mean(out)


def _images(gen, n, texture):
    H = LR_SIZE * SCALE
    yy, xx = torch.meshgrid(torch.linspace(0, 1, H), torch.linspace(0, 1, H), indexing="ij")
    imgs = torch.empty(n, 3, H, H)
    for i in range(n):
        base = 60 + 140 * torch.rand(3, 1, 1, generator=gen)
        gx, gy = (torch.rand(2, generator=gen) - 0.5) * 120
        img = base + gx * xx + gy * yy
        for _ in range(int(torch.randint(1, 4, (1,), generator=gen))):   # objects / edges
            x0, y0 = torch.randint(0, H - 4, (2,), generator=gen).tolist()
            w, h = torch.randint(4, H // 2, (2,), generator=gen).tolist()
            img[:, y0:y0 + h, x0:x0 + w] = 30 + 200 * torch.rand(3, 1, 1, generator=gen)
        fx, fy = (1 + 4 * torch.rand(2, generator=gen)).tolist()
        ph = float(6.28 * torch.rand(1, generator=gen))
        img = img + 15 * torch.sin(6.28 * (fx * xx + fy * yy) + ph)
        if texture:   # foliage: dense high-frequency detail the LR image barely keeps
            img = img + 70 * (torch.rand(1, H, H, generator=gen) - 0.5)
            img = img + 40 * torch.sin(6.28 * (H / 2.3) * xx + 3 * yy)
        imgs[i] = img
    hr = imgs.clamp(0, 255).round()
    lr = F.avg_pool2d(hr, SCALE).round()          # 8-bit LR
    return lr, hr


def build(seed: int, fixed: bool = False) -> dict:
    # healthy: `fixed` changes nothing
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(2718 + seed)
    nf = [16, 12, 16][seed % 3]
    gc = [8, 8, 6][(seed // 3) % 3]
    nb = [1, 2, 2][(seed + 1) % 3]
    bs = [8, 6, 8][(seed + 2) % 3]
    lr = [2e-4, 3e-4, 1e-4][seed % 3] * 2.0
    period = 25 + (seed * 7) % 21
    steps = 160

    model = RRDBNet(nf, gc, nb)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr,
                           betas=(0.9, 0.99))
    batches = []
    for t in range(steps):
        texture = t > 0 and t % period == period - 1
        batches.append(_images(gen, bs, texture))
    return dict(model=model, optimizer=opt, loss_fn=F.l1_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
