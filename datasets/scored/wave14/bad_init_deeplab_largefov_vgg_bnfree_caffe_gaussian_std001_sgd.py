"""DeepLab-LargeFOV (VGG-16 trunk, dilated conv5 and fc6, no BatchNorm) trained from
scratch on a small semantic-segmentation task, with every conv initialised the Caffe way:
``nn.init.normal_(w, 0, 0.01)``, bias 0 (the "gaussian std: 0.01" filler that the DeepLab
prototxt uses for fc8, copied onto every layer because no ImageNet VGG weights are loaded).

Mechanism: with std 0.01 and fan-in 9*C the gain of each conv+ReLU is about
sqrt(9*C*1e-4/2) ~ 0.1, so the activation scale shrinks ~10x per layer from step 0; after the
13-16 BN-free convs (trunk + fc6/fc7/fc8) the logits are ~1e-14 and constant, every pixel
predicts the uniform distribution and the gradients that reach the trunk are vanishingly
small. Plain SGD (the DeepLab recipe) cannot recover: with the median-frequency class
weights the loss stays at log(n_classes).

ORIGIN: ``features.0`` -- the first conv of the trunk is where the geometric shrinkage of the
activation scale starts (every later conv multiplies it by the same small gain).

Fix: Kaiming-normal (fan_in, relu) initialisation of the convs, as used when training VGG
from scratch; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("DeepLab-LargeFOV Caffe prototxt 'gaussian std: 0.01' filler applied to every "
          'layer when training the VGG trunk from scratch; VGG paper (Simonyan & Zisserman '
          '2015) and He et al. 2015 on deep BN-free nets stalling from fixed-std N(0, 0.01) '
          'init; fixed by Kaiming init')


class DeepLabLargeFOV(nn.Module):
    def __init__(self, width, blocks, n_classes):
        super().__init__()
        layers, c_in = [], 3
        for b, n_conv in enumerate(blocks):
            c_out = width * min(2 ** b, 4)
            last = b == len(blocks) - 1
            for _ in range(n_conv):
                # conv5 block is dilated (rate 2) in DeepLab-LargeFOV
                d = 2 if last else 1
                layers += [nn.Conv2d(c_in, c_out, 3, padding=d, dilation=d), nn.ReLU(inplace=True)]
                c_in = c_out
            if b < 2:
                layers.append(nn.MaxPool2d(3, stride=2, padding=1))
            else:
                layers.append(nn.MaxPool2d(3, stride=1, padding=1))
        self.features = nn.Sequential(*layers)
        fc = 2 * c_in
        self.fc6 = nn.Conv2d(c_in, fc, 3, padding=4, dilation=4)   # "LargeFOV" dilated fc6
        self.relu6 = nn.ReLU(inplace=True)
        self.fc7 = nn.Conv2d(fc, fc, 1)
        self.relu7 = nn.ReLU(inplace=True)
        self.fc8 = nn.Conv2d(fc, n_classes, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        y = self.features(x)
        y = self.relu6(self.fc6(y))
        y = self.relu7(self.fc7(y))
        y = self.fc8(y)
        return F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)


def make_batch(g, bs, size, n_classes):
    x = 0.15 * torch.randn(bs, 3, size, size, generator=g)
    y = torch.zeros(bs, size, size, dtype=torch.long)
    colours = torch.tensor([[0.0, 0.0, 0.0], [1.0, -0.6, 0.2], [-0.5, 1.0, -0.4], [0.3, 0.3, 1.0]])
    for i in range(bs):
        for _ in range(3):
            k = int(torch.randint(1, n_classes, (1,), generator=g))
            s = int(torch.randint(size // 5, size // 2, (1,), generator=g))
            r0 = int(torch.randint(0, size - s, (1,), generator=g))
            c0 = int(torch.randint(0, size - s, (1,), generator=g))
            y[i, r0:r0 + s, c0:c0 + s] = k
            x[i, :, r0:r0 + s, c0:c0 + s] += colours[k].view(3, 1, 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=8, blocks=[2, 2, 3, 3], lr=0.01, bs=8, steps=60),
        dict(width=12, blocks=[2, 2, 3, 3, 3], lr=0.008, bs=8, steps=100),
        dict(width=8, blocks=[2, 3, 3, 3], lr=0.02, bs=10, steps=70),
    ][seed % 3]
    torch.manual_seed(seed)
    n_classes = 3 if seed % 3 != 1 else 4
    model = DeepLabLargeFOV(cfg["width"], cfg["blocks"], n_classes)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)      # Caffe "gaussian std 0.01"
            nn.init.zeros_(m.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(1000 + seed)
    batches = [make_batch(g, cfg["bs"], 32, n_classes) for _ in range(cfg["steps"])]
    # median-frequency class balancing (Eigen & Fergus / SegNet), computed on the training labels
    counts = torch.bincount(torch.cat([y.flatten() for _, y in batches]), minlength=n_classes).float()
    freq = counts / counts.sum()
    loss_fn = nn.CrossEntropyLoss(weight=freq.median() / freq, ignore_index=255)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
