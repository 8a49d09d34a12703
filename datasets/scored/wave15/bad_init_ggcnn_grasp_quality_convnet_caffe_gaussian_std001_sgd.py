"""GG-CNN (Morrison et al. 2018) generative grasping CNN on synthetic depth crops.

Mechanism: the user ports an old Caffe-style init, ``nn.init.normal_(w, 0, 0.01)`` with zero
biases, onto every conv / transposed conv of the BN-free GG-CNN encoder-decoder.  With fan-ins of
81..800 each layer multiplies the activation scale by ~0.01*sqrt(fan_in/2) << 1, so after six
layers the feature maps that reach the four 2x2 heads (quality, cos2t, sin2t, width) are orders of
magnitude below the input scale and the backpropagated gradients shrink the same way.  Plain SGD only learns the
head biases (the mean of the sparse grasp maps) and the loss plateaus from step 0.

ORIGIN: ``features.0`` -- the first conv is where the geometric shrinkage starts (every later
layer compounds it).
Fix: kaiming (He) normal init for the ReLU convs (fixed=True), everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("GG-CNN (dougsm/ggcnn) trained with a Caffe-style gaussian(std=0.01) filler copied from "
          "old grasp-detection code; known 'vanishing signal with tiny gaussian init in deep BN-free "
          "convnets' pattern (He et al. 2015).")


class GGCNN(nn.Module):
    def __init__(self, c=(32, 16, 8)):
        super().__init__()
        c1, c2, c3 = c
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 9, stride=3, padding=3), nn.ReLU(inplace=True),
            nn.Conv2d(c1, c2, 5, stride=2, padding=2), nn.ReLU(inplace=True),
            nn.Conv2d(c2, c3, 3, stride=2, padding=1), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(c3, c3, 3, stride=2, padding=1, output_padding=1), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(c3, c2, 5, stride=2, padding=2, output_padding=1), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(c2, c1, 9, stride=3, padding=3), nn.ReLU(inplace=True),
        )
        self.pos_output = nn.Conv2d(c1, 1, 3, padding=1)
        self.cos_output = nn.Conv2d(c1, 1, 3, padding=1)
        self.sin_output = nn.Conv2d(c1, 1, 3, padding=1)
        self.width_output = nn.Conv2d(c1, 1, 3, padding=1)

    def forward(self, x):
        h = self.features(x)
        return torch.cat([self.pos_output(h), self.cos_output(h), self.sin_output(h),
                          self.width_output(h)], 1)


def make_batch(g, bs, S=36):
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    c = torch.rand(bs, 2, generator=g) * (S - 16) + 8
    th = torch.rand(bs, generator=g) * 3.14159
    L = 5 + 5 * torch.rand(bs, generator=g)
    W = 2 + 3 * torch.rand(bs, generator=g)
    dx, dy = xx[None] - c[:, 0, None, None], yy[None] - c[:, 1, None, None]
    ct, st = torch.cos(th)[:, None, None], torch.sin(th)[:, None, None]
    u, v = dx * ct + dy * st, -dx * st + dy * ct
    obj = ((u.abs() < L[:, None, None]) & (v.abs() < W[:, None, None])).float()
    depth = (obj * (0.5 + 0.5 * torch.rand(bs, 1, 1, generator=g)))[:, None]
    depth = depth + 0.01 * torch.randn(depth.shape, generator=g)
    q = torch.exp(-(dx ** 2 + dy ** 2) / 18.0)          # grasp quality blob at the centre
    m = (q > 0.3).float()
    ga = th + 3.14159 / 2                                # grasp across the short side
    tgt = torch.stack([q, m * torch.cos(2 * ga)[:, None, None], m * torch.sin(2 * ga)[:, None, None],
                       m * (W / 5.0)[:, None, None]], 1)
    return depth, tgt


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c=(32, 16, 8), lr=0.3, bs=8, steps=80),
           dict(c=(24, 16, 16), lr=0.25, bs=12, steps=80),
           dict(c=(32, 24, 12), lr=0.3, bs=8, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = GGCNN(cfg["c"])
    for mod in model.modules():
        if isinstance(mod, (nn.Conv2d, nn.ConvTranspose2d)):
            if fixed:
                nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else:
                nn.init.normal_(mod.weight, 0.0, 0.01)   # Caffe "gaussian" filler
            nn.init.zeros_(mod.bias)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)

    def loss_fn(out, y):
        return sum(F.mse_loss(out[:, i], y[:, i]) for i in range(4))

    batches = [make_batch(g, cfg["bs"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
