"""Healthy: Johnson-style fast neural style transfer. An image transformation network
(strided conv encoder, residual blocks with InstanceNorm, upsampling decoder) is
trained with a perceptual loss computed by a frozen feature network (random-weight
convs, as in random-feature texture synthesis, standing in for VGG): content MSE on
one feature layer plus style_weight * Gram-matrix MSE on several layers, with the
common huge style_weight (1e7 here, content weight 1).

Why it looks alarming: the total loss starts at ~3e4-5e4 (Gram terms times 1e7) and
its per-batch value jumps by tens of percent with content-image statistics -
the magnitude signature of unscaled targets or exploding activations. But the
magnitude is only the chosen weighting: Adam is invariant to a constant loss scale,
InstanceNorm keeps the activations bounded, and the loss falls steadily by more than
an order of magnitude. No cause: nothing to fix (ORIGIN None).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Johnson et al. 2016 'Perceptual Losses for Real-Time Style Transfer' and "
          "the pytorch/examples fast_neural_style (style-weight 1e10 on 0-255 inputs, "
          "1e7 here) whose printed losses are in the 1e4-1e6 range; Ustyuzhaninov et al. "
          "2017 texture synthesis with random shallow networks")


class ConvIN(nn.Sequential):
    def __init__(self, cin, cout, k, stride=1):
        super().__init__(nn.Conv2d(cin, cout, k, stride, padding=k // 2),
                         nn.InstanceNorm2d(cout, affine=True), nn.ReLU())


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = ConvIN(c, c, 3)
        self.b = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.InstanceNorm2d(c, affine=True))

    def forward(self, x):
        return x + self.b(self.a(x))


class TransformerNet(nn.Module):
    def __init__(self, w, n_res):
        super().__init__()
        self.enc = nn.Sequential(ConvIN(3, w, 5), ConvIN(w, 2 * w, 3, 2))
        self.res = nn.Sequential(*[ResBlock(2 * w) for _ in range(n_res)])
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                 ConvIN(2 * w, w, 3), nn.Conv2d(w, 3, 5, padding=2))

    def forward(self, x):
        return self.dec(self.res(self.enc(x)))


def gram(f):
    b, c, h, w = f.shape
    f = f.flatten(2)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    w = [16, 12, 16][seed % 3]
    n_res = [2, 3, 2][seed % 3]
    bs = [4, 4, 6][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    style_weight = 1e7
    size = 24
    steps = 120
    model = TransformerNet(w, n_res)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    # frozen feature ("loss") network
    fnet = nn.ModuleList([nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()),
                          nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU()),
                          nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())])
    lg = torch.Generator().manual_seed(777)
    for m in fnet.modules():
        if isinstance(m, nn.Conv2d):
            with torch.no_grad():
                m.weight.copy_(torch.randn(m.weight.shape, generator=lg) * (2.0 / (m.weight[0].numel())) ** 0.5)
                m.bias.zero_()
    for p in fnet.parameters():
        p.requires_grad_(False)

    def feats(x):
        out = []
        for blk in fnet:
            x = blk(x)
            out.append(x)
        return out

    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    style_img = torch.stack([0.5 + 0.5 * torch.sin(25 * xx + 9 * yy),
                             0.5 + 0.5 * torch.sin(17 * yy),
                             0.5 + 0.5 * torch.cos(13 * (xx - yy))]).unsqueeze(0)
    with torch.no_grad():
        style_grams = [gram(f) for f in feats(style_img)]

    batches = []
    for _ in range(steps):
        base = torch.rand(bs, 3, 1, 1, generator=g)
        grad_dir = torch.rand(bs, 3, 1, 1, generator=g) - 0.5
        blob_c = torch.rand(bs, 2, 1, 1, generator=g)
        blob = torch.exp(-((xx - blob_c[:, :1]) ** 2 + (yy - blob_c[:, 1:]) ** 2) / 0.05)
        img = (base + grad_dir * xx + 0.5 * blob * (torch.rand(bs, 3, 1, 1, generator=g) - 0.5)).clamp(0, 1)
        batches.append((img, img))

    def loss_fn(out, content):
        fo = feats(out)
        with torch.no_grad():
            fc = feats(content)
        c_loss = F.mse_loss(fo[1], fc[1])
        s_loss = sum(F.mse_loss(gram(f), sg.expand(f.shape[0], -1, -1))
                     for f, sg in zip(fo, style_grams))
        return c_loss + style_weight * s_loss

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
