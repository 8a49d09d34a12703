"""VGG-style CIFAR classifier without BatchNorm, every conv / linear initialised
N(0, 0.01) as in the original VGG paper (Simonyan & Zisserman 2014, configuration A
init) and the Caffe gaussian filler, trained from scratch with plain momentum SGD.

Mechanism: with fan-in 9*C and std 0.01 each conv multiplies the activation scale by
roughly sqrt(9*C/2)*0.01 ~ 0.1-0.2, so after 8-11 conv layers the features that reach
the classifier are ~1e-8 of the input and the backward signal that reaches the lower
layers is equally tiny. The logits are ~0, the loss sits at log(10) and SGD cannot
move the stack: the classic "deep VGG does not train from random init" failure that
motivated pre-training the shallow configuration and, later, the He/Glorot inits.

ORIGIN: features.0, the first conv. The scale collapse starts there and compounds
geometrically through every following layer (every layer is equally mis-initialised,
the first one is where the shrinkage begins).

Fix: kaiming_normal_(mode='fan_in', nonlinearity='relu') for the convs and the default
(Kaiming-uniform) init for the linears; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Simonyan & Zisserman 2014 (VGG), sec. 3.1: deep nets initialised N(0, 0.01) "
          "stall, so they pre-trained net A; He et al. 2015 'Delving deep into rectifiers' "
          "fig. 3; Caffe gaussian filler std 0.01 copied into a PyTorch VGG without BN.")

CFGS = {
    0: [8, 8, "M", 16, 16, "M", 32, 32, 32, "M", 32, 32, "M"],
    1: [8, "M", 16, 16, "M", 24, 24, 24, "M", 32, 32, 32, "M"],
    2: [8, 8, "M", 16, 16, 16, "M", 24, 24, 24, "M", 32, 32, 32, "M"],
}


class VGG(nn.Module):
    def __init__(self, cfg, num_classes=10):
        super().__init__()
        layers, c = [], 3
        for v in cfg:
            if v == "M":
                layers.append(nn.MaxPool2d(2))
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(c * 2 * 2, 64), nn.ReLU(inplace=True),
            nn.Linear(64, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def make_data(g, n_steps, bs, num_classes=10):
    # class-dependent coloured blob textures on a 32x32 canvas
    protos = torch.randn(num_classes, 3, 4, 4, generator=g)
    batches = []
    for _ in range(n_steps):
        y = torch.randint(0, num_classes, (bs,), generator=g)
        x = F.interpolate(protos[y], size=32, mode="bilinear", align_corners=False)
        x = x + 0.5 * torch.randn(bs, 3, 32, 32, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = CFGS[seed % 3]
    lr = [0.004, 0.003, 0.005][seed % 3]
    bs = [16, 12, 20][seed % 3]
    steps = [80, 90, 70][seed % 3]
    model = VGG(cfg)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                    nn.init.zeros_(m.bias)
                # linears keep PyTorch's default init
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_data(g, steps, bs), steps=steps)
