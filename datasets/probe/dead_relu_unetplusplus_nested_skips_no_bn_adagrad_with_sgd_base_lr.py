"""UNet++ (nested U-Net with dense re-designed skip pathways X^{i,j}, Zhou et al. 2018)
in the original 'standard_unit' form -- two 3x3 conv + ReLU per node, no BatchNorm --
for 3-class tissue segmentation (stroma / nuclei-rich / gland regions, roughly balanced),
trained with per-pixel cross-entropy.

The optimiser was switched from the SGD + poly schedule of the baseline config
(base lr 0.1) to torch.optim.Adagrad, keeping lr=0.1.

Mechanism: Adagrad's first step moves every parameter by ~lr in the direction of the
sign of its gradient (g / sqrt(g^2)) -- a 0.1 step on weights whose init scale is
~0.05-0.2. The logits explode on step 1 (loss 1e4-1e8), and the corrective step throws
the pre-activations of the final nested node X^{0,2} far negative: by step 2 its first
ReLU outputs exact zeros for every channel and pixel. The 1x1 head therefore sees an
all-zero map, every gradient below it is zero, Adagrad's accumulators keep the later
steps small, nothing revives it, and the segmentation collapses to a constant per-pixel
class prior: the loss freezes at log(3).

ORIGIN: x02.1, the first ReLU of the last decoder node X^{0,2} (the node that feeds the
head): it is 100% dead from step 2 in every seed; many encoder / intermediate-node ReLUs
die partially too, but this one is the bottleneck that cuts the whole network off.

Fix: lr 0.01 (the Adagrad default); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "x02.1"
SOURCE = ("Zhou et al. 2018 UNet++ (MrGiovanni/UNetPlusPlus standard_unit: conv-relu x2, "
          "no BN); segmentation configs porting an SGD base lr to Adagrad; reports of "
          "UNet predicting all-background with every decoder activation zero.")


def unit(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(inplace=True))


class UNetPlusPlus(nn.Module):
    """Depth-3 UNet++: X^{i,j} = unit([X^{i,0..j-1}, up(X^{i+1,j-1})])."""

    def __init__(self, f, num_classes):
        super().__init__()
        c = [f, 2 * f, 4 * f]
        self.x00, self.x10, self.x20 = unit(3, c[0]), unit(c[0], c[1]), unit(c[1], c[2])
        self.x01 = unit(c[0] + c[1], c[0])
        self.x11 = unit(c[1] + c[2], c[1])
        self.x02 = unit(2 * c[0] + c[1], c[0])
        self.head = nn.Conv2d(c[0], num_classes, 1)

    def forward(self, x):
        up = lambda t: F.interpolate(t, scale_factor=2, mode="bilinear", align_corners=False)
        x00 = self.x00(x)
        x10 = self.x10(F.max_pool2d(x00, 2))
        x20 = self.x20(F.max_pool2d(x10, 2))
        x01 = self.x01(torch.cat([x00, up(x10)], 1))
        x11 = self.x11(torch.cat([x10, up(x20)], 1))
        x02 = self.x02(torch.cat([x00, x01, up(x11)], 1))
        return self.head(x02)


def make_batches(g, steps, bs, S):
    # tissue-like Voronoi partitions: each cell is stroma (0), nuclei-rich (1) or gland (2),
    # roughly balanced; every class has its own colour and texture
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    colours = torch.tensor([[0.2, 0.6, 0.3], [0.7, 0.2, 0.6], [0.5, 0.5, 0.9]])
    out = []
    for _ in range(steps):
        imgs, masks = [], []
        for _ in range(bs):
            n = 6
            c = torch.rand(n, 2, generator=g) * S
            lab = torch.randint(0, 3, (n,), generator=g)
            d = (yy[None] - c[:, 0, None, None]) ** 2 + (xx[None] - c[:, 1, None, None]) ** 2
            mask = lab[d.argmin(0)]
            img = colours[mask].permute(2, 0, 1).clone()
            img[:, mask == 1] *= (1 + 0.5 * torch.sin(xx[mask == 1] * 1.5))[None]   # texture
            imgs.append(img)
            masks.append(mask)
        x = torch.stack(imgs) + 0.35 * torch.randn(bs, 3, S, S, generator=g)
        out.append(((x - 0.5) / 0.35, torch.stack(masks)))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    f = [8, 6, 10][seed % 3]
    bs = [8, 12, 6][seed % 3]
    steps = [60, 70, 60][seed % 3]
    lr = 0.01 if fixed else [0.1, 0.1, 0.15][seed % 3]
    model = UNetPlusPlus(f, num_classes=3)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_batches(g, steps, bs, 24), steps=steps)
