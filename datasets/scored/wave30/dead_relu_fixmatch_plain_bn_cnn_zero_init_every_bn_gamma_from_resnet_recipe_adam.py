"""FixMatch semi-supervised training of a plain (non-residual) Conv-BN-ReLU network on small
image crops: each step sees a labelled batch, and an unlabelled batch under a weak and a strong
augmentation; the model runs all three in one forward (as FixMatch does, so BatchNorm sees one
batch) and the loss is cross-entropy on the labelled crops plus the cross-entropy of the strong
view against the weak view's arg-max pseudo-label, masked to confident (p >= 0.95) pseudo-labels.

Mechanism: the init code was copied from a ResNet recipe that zero-initialises the BatchNorm
scale (gamma) so that residual branches start as the identity ("zero_init_residual").  Here it is
applied to every BatchNorm of a network without skip connections: every BN outputs exactly
beta = 0, every ReLU outputs exactly 0 and has zero gradient, so neither the convolutions nor
the BN scales and shifts ever receive a gradient (a ReLU at exactly 0 passes none).  Only the
classifier bias can move; the logits are the same for every crop, no pseudo-label is ever
confident, and the loss stays at log(C) (a stall, no non-finite value).

ORIGIN = "features.1": the first BatchNorm, whose zero scale makes the first ReLU (features.2)
dead from step 0; every later Conv-BN-ReLU block only inherits an all-zero input, and the first
conv before it is intact but receives no gradient through the dead ReLU.

Fix: BatchNorm scales at their default of 1 (zero-gamma init is meant only for the last BN of a
residual branch, and this network has none); everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.1"
SOURCE = ("zero_init_residual / 'zero-gamma' trick (Goyal et al. 2017, torchvision ResNet "
          "zero_init_residual) applied to every BatchNorm of a plain CNN; FixMatch loop after "
          "Sohn et al. 2020.")


class PlainCNN(nn.Module):
    def __init__(self, widths, n_classes):
        super().__init__()
        layers = []
        c = 1
        for i, w in enumerate(widths):
            layers += [nn.Conv2d(c, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU()]
            if i < 2:
                layers.append(nn.MaxPool2d(2))
            c = w
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(c, n_classes)

    def forward(self, x_lab, x_weak, x_strong):
        n_l, n_u = x_lab.shape[0], x_weak.shape[0]
        h = self.features(torch.cat([x_lab, x_weak, x_strong]))
        logits = self.classifier(h.mean(dim=(2, 3)))
        return logits[:n_l], logits[n_l:n_l + n_u], logits[n_l + n_u:]


def _shapes(g, n, n_classes):
    """Crops of simple glyphs: class k is a bar at angle k*pi/C, position jittered."""
    y = torch.randint(0, n_classes, (n,), generator=g)
    ang = y.float() * 3.14159 / n_classes
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
    off = 0.3 * (torch.rand(n, 2, generator=g) - 0.5)
    xs = xx[None] - off[:, 0, None, None]
    ys = yy[None] - off[:, 1, None, None]
    d = (xs * torch.sin(ang)[:, None, None] - ys * torch.cos(ang)[:, None, None]).abs()
    img = torch.exp(-(d / 0.15) ** 2) * (xs ** 2 + ys ** 2 < 0.7).float()
    img = img + 0.15 * torch.randn(n, 16, 16, generator=g)
    return img[:, None], y


def _weak(g, x):
    return torch.roll(x, shifts=int(torch.randint(-1, 2, (1,), generator=g)), dims=3)


def _strong(g, x):
    x = x * (0.6 + 0.8 * torch.rand(x.shape[0], 1, 1, 1, generator=g)) + 0.3 * torch.randn(x.shape, generator=g)
    i, j = torch.randint(0, 10, (2,), generator=g).tolist()
    x = x.clone()
    x[:, :, i:i + 6, j:j + 6] = 0.0  # cutout
    return x


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    widths = pick(1, [[16, 32, 32], [12, 24, 48], [16, 32, 64]])
    lr = pick(2, [2e-3, 1e-3, 3e-3])
    n_lab = pick(3, [16, 24, 32])
    mu = pick(4, [2, 3])
    steps = 100
    n_classes = 6

    model = PlainCNN(widths, n_classes)
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.zeros_(m.weight)

    batches = []
    for _ in range(steps):
        xl, yl = _shapes(g, n_lab, n_classes)
        xu, _ = _shapes(g, mu * n_lab, n_classes)
        batches.append(((_weak(g, xl), _weak(g, xu), _strong(g, xu)), yl))

    def loss_fn(out, y):
        logit_l, logit_w, logit_s = out
        sup = F.cross_entropy(logit_l, y)
        probs = F.softmax(logit_w.detach(), -1)
        conf, pseudo = probs.max(-1)
        mask = (conf >= 0.95).float()
        unsup = (F.cross_entropy(logit_s, pseudo, reduction="none") * mask).mean()
        return sup + 1.0 * unsup

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
