"""d2l.ai VGG (small conv_arch for Fashion-MNIST-sized inputs) trained with the learning rate of
the d2l LeNet section (SGD lr=0.9) instead of the VGG section's lr=0.05.

Mechanism
---------
The d2l LeNet chapter trains its sigmoid LeNet with ``lr, num_epochs = 0.9, 10``; the VGG chapter
uses ``lr=0.05``.  A student running the chapters in one notebook re-used the ``lr`` variable
from the LeNet cell for VGG.  VGG has ReLU convolutions, Xavier init (d2l.init_cnn), no batch
norm and plain SGD: with lr=0.9 the update/weight ratio of the classifier layers is ~0.1-1 per
step instead of ~1e-3.  The first few steps overshoot, the logits and the gradients grow with
every step and within 10-20 steps the loss jumps to tens / hundreds and becomes inf/NaN (or, if
the overshoot first drives every ReLU negative, the network ends up flat at ln(10)).

ORIGIN
------
None -- a global optimisation hyper-parameter; every layer is overstepped at once.

Fix
---
fixed=True uses the VGG section's lr=0.05 (same init, data, architecture, optimizer class).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("d2l.ai 7.6 LeNet (lr=0.9) vs 8.2 VGG (lr=0.05): notebook variable re-used across "
          "sections; d2l forum 'VGG loss nan' threads")


def vgg_block(num_convs, in_channels, out_channels):
    layers = []
    for _ in range(num_convs):
        layers.append(nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1))
        layers.append(nn.ReLU())
        in_channels = out_channels
    layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, conv_arch, side, hidden, num_classes=10):
        super().__init__()
        blocks, in_ch = [], 1
        for num_convs, out_ch in conv_arch:
            blocks.append(vgg_block(num_convs, in_ch, out_ch))
            in_ch = out_ch
        self.features = nn.Sequential(*blocks)
        flat = in_ch * (side // 2 ** len(conv_arch)) ** 2
        head = [nn.Flatten(), nn.Linear(flat, hidden), nn.ReLU(), nn.Dropout(0.5),
                nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.5),
                nn.Linear(hidden, num_classes)]
        self.classifier = nn.Sequential(*head)

    def forward(self, x):
        return self.classifier(self.features(x))


def _fashion_like(g, n_batches, bs, side, n_cls):
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    templ = nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    templ = (templ > 0.2).float() * 0.8 + 0.1
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templ[y] * (0.7 + 0.6 * torch.rand(bs, 1, 1, 1, generator=g))
        x = x + 0.3 * torch.randn(x.shape, generator=g)
        out.append(((x - 0.45) / 0.4, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    conv_arch = [((1, 8), (1, 16), (2, 32)), ((1, 16), (2, 32)), ((1, 16), (1, 32), (1, 64))][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    bs = [64, 48, 48][seed % 3]
    lr = 0.05 if fixed else [0.9, 0.9, 0.9][seed % 3]     # lr left over from the LeNet cell
    side, n_cls, steps = 16, 10, 90

    model = VGG(conv_arch, side, hidden, n_cls)
    for m in model.modules():                      # d2l init_cnn
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    batches = _fashion_like(g, steps, bs, side, n_cls)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
