"""ESPCN-style sub-pixel super-resolution net whose conv weights were re-initialised
with ``nn.init.normal_(w, 0, 1)`` (a "weights_init" helper written for a tiny MLP was
applied to every Conv2d of the SR body).

Mechanism: with 3x3 kernels and C channels the fan-in is 9*C, so a unit-std weight
multiplies the activation scale by roughly sqrt(9*C/2) per ReLU layer. Over the 4-6
conv layers of the feature extractor the activation scale grows geometrically from
step 0 (outputs of 10^3-10^6 instead of ~1), the L1 reconstruction loss starts
astronomically high, the gradients are equally huge and nothing can pull the output
back into pixel range: the SGD+momentum step taken on those gradients overflows the
weights and the loss turns non-finite within the first steps.

ORIGIN: ``body.0`` - the first conv of the feature extractor, where the geometric
growth starts (every later conv multiplies it further).

Fix: Kaiming-normal (fan_in, relu) init for the body convs and a small-std init for
the sub-pixel projection (the ESPCN/EDSR default), everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "body.0"
SOURCE = ("ESPCN/SRCNN re-implementations in which a generic weights_init "
          "(normal_(0, 1)) is applied to all Conv2d layers; the PyTorch forum 'SR "
          "loss is 1e10 and never goes down' threads where the fix was kaiming init")


class ESPCN(nn.Module):
    def __init__(self, width, depth, scale):
        super().__init__()
        layers = []
        cin = 1
        for i in range(depth):
            layers.append(nn.Conv2d(cin, width, 3, padding=1))
            layers.append(nn.ReLU())
            cin = width
        self.body = nn.Sequential(*layers)
        self.tail = nn.Conv2d(width, scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)
        self.scale = scale

    def forward(self, lr_img):
        up = F.interpolate(lr_img, scale_factor=self.scale, mode="bilinear",
                           align_corners=False)
        return up + self.shuffle(self.tail(self.body(lr_img)))


def _textures(g, n, size):
    # smooth random "natural image" patches: sums of oriented sinusoids + blobs
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size),
                            indexing="ij")
    imgs = torch.zeros(n, 1, size, size)
    for k in range(4):
        fx = torch.rand(n, 1, 1, 1, generator=g) * 3 + 0.5
        fy = torch.rand(n, 1, 1, 1, generator=g) * 3 + 0.5
        ph = torch.rand(n, 1, 1, 1, generator=g) * 6.28
        a = torch.rand(n, 1, 1, 1, generator=g) * 0.25
        imgs = imgs + a * torch.sin(fx * 6.28 * xx + fy * 6.28 * yy + ph)
    return (imgs + 0.5).clamp(0, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    width = [16, 24, 20][seed % 3]
    depth = [4, 5, 6][seed % 3]
    scale = 2
    bs = [8, 6, 10][seed % 3]
    steps = 120
    lr = [0.02, 0.015, 0.01][seed % 3]
    model = ESPCN(width, depth, scale)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                if m is model.tail:
                    nn.init.normal_(m.weight, 0.0, 1e-3)
                else:
                    nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    hr_size = 16
    batches = []
    for _ in range(steps):
        hr = _textures(g, bs, hr_size)
        lr_img = F.avg_pool2d(hr, scale)
        batches.append((lr_img, hr))

    def loss_fn(out, target):
        return F.l1_loss(out, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
