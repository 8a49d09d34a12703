"""Dual-phase steel EBSD phase segmentation: a plain fully-convolutional net (no norm layers)
labels every pixel of an EBSD map (channels: band contrast, band slope, confidence index,
image quality) as ferrite / martensite / retained austenite.

Mechanism: the conv layers are initialised with `nn.init.normal_(w, 0.0, 1.0)` (a port from an
old Lua-Torch / numpy script that drew weights from a unit Gaussian). With fan_in = 9*C, every
3x3 conv multiplies the activation scale by roughly sqrt(9*C/2) ~ 5-10, so after a few layers
the per-pixel logits are 1e3-1e6 from step 0. The cross-entropy is enormous, its gradient
w.r.t. the early weights is scaled by the same huge activations, and SGD with momentum throws
the weights to inf/NaN within a few steps (or, for some depths, into a dead state where every
ReLU is off and the net outputs a constant).

ORIGIN: `body.0`, the first conv. The geometric growth starts at the first badly scaled
layer, and every later conv only compounds it.

Fix: Kaiming-normal init (fan_in, relu gain) for the convs, zero biases.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "body.0"
SOURCE = ("Known pattern: unit-variance Gaussian weight init (std=1) in deep conv nets without "
          "normalisation; He et al. 2015 'Delving deep into rectifiers' analysis of activation "
          "variance growth, and PyTorch forum threads on 'loss is nan from first iterations "
          "after custom normal_ init' for segmentation FCNs.")


class EBSDPhaseFCN(nn.Module):
    def __init__(self, in_ch, width, depth, n_phase):
        super().__init__()
        layers = []
        c = in_ch
        for _ in range(depth):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU()]
            c = width
        self.body = nn.Sequential(*layers)
        self.head = nn.Conv2d(width, n_phase, 1)

    def forward(self, x):
        return self.head(self.body(x))


def _ebsd_maps(g, n, size):
    # Voronoi-ish grain map: each pixel gets the phase of its nearest seed point.
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    pix = torch.stack([yy, xx], -1).float().view(-1, 2)
    xs, ys = [], []
    for _ in range(n):
        k = 12
        seeds = torch.rand(k, 2, generator=g) * size
        ph = torch.randint(0, 3, (k,), generator=g)
        d = torch.cdist(pix, seeds)
        lab = ph[d.argmin(1)].view(size, size)
        # phase-dependent band contrast / slope / CI / IQ, plus noise
        means = torch.tensor([[0.8, 0.6, 0.7, 0.9], [0.4, 0.3, 0.5, 0.5], [0.6, 0.8, 0.3, 0.7]])
        x = means[lab].permute(2, 0, 1) + 0.15 * torch.randn(4, size, size, generator=g)
        xs.append(x)
        ys.append(lab)
    return torch.stack(xs), torch.stack(ys)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [5, 6, 7][seed % 3]
    width = [16, 24, 32][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    bs = [4, 6, 8][seed % 3]
    steps = 60
    torch.manual_seed(seed)
    model = EBSDPhaseFCN(4, width, depth, 3)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    x, y = _ebsd_maps(g, bs * 8, 24)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, target):
        return F.cross_entropy(out, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
