"""Camera-trap species classifier: a BN-free CNN whose weights_init calls nn.init.normal_(w).

Mechanism: a small VGG-style CNN (no BatchNorm, as in many lightweight edge/trail-camera
models) classifies 32x32 crops of camera-trap detections into species. A ``weights_init``
helper meant to draw N(0, 0.02) calls ``nn.init.normal_(m.weight)`` without the std argument,
so every conv/linear weight is N(0, 1). Each 3x3 conv with C input channels multiplies the
activation scale by about sqrt(9*C/2) (~8-17) and the head by sqrt(fan_in/2), so the logits
come out at 1e5-1e7 from step 0. Cross-entropy on such logits is huge and its gradient w.r.t.
the early convs is enormous; the first SGD steps throw the weights to inf and the loss
becomes non-finite within a few steps (or, on the deeper variant, the first giant update leaves
every ReLU of a layer dead, and the loss drops to log(6) and stays exactly there).

ORIGIN = "features.0": the blow-up is geometric with depth and starts at the first conv (the
first layer with the oversized weights); every later layer multiplies it further.

Fix: ``nn.init.kaiming_normal_(w, nonlinearity="relu")`` with zero bias (the init the author
meant); same architecture, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("DCGAN-style weights_init helpers copied as nn.init.normal_(m.weight) with the std "
          "dropped (default std=1); PyTorch forum 'loss is nan from the first iteration after "
          "custom weight init'; He et al. 2015 on activation variance growth in plain CNNs")


class TrapCNN(nn.Module):
    def __init__(self, chans, n_cls):
        super().__init__()
        layers = []
        c = 3
        for i, co in enumerate(chans):
            layers += [nn.Conv2d(c, co, 3, padding=1), nn.ReLU()]
            if i % 2 == 1:
                layers.append(nn.MaxPool2d(2))
            c = co
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c, n_cls)

    def forward(self, x):
        h = self.features(x)
        h = h.mean((2, 3))
        return self.head(h)


def _images(g, n, n_cls, protos):
    y = torch.randint(0, n_cls, (n,), generator=g)
    # background: vegetation texture + illumination (day/IR night)
    bg = 0.3 * torch.randn(n, 3, 32, 32, generator=g)
    night = (torch.rand(n, generator=g) < 0.3).float().view(n, 1, 1, 1)
    bg = bg * (1 - night) + night * bg.mean(1, keepdim=True)
    # the animal: a class-specific coat pattern placed at a random offset
    img = bg.clone()
    ox = torch.randint(0, 16, (n,), generator=g)
    oy = torch.randint(0, 16, (n,), generator=g)
    for i in range(n):
        img[i, :, oy[i]:oy[i] + 16, ox[i]:ox[i] + 16] += protos[y[i]]
    return img, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    chans = [[16, 16, 32, 32], [12, 24, 24, 48], [16, 16, 32, 32, 48]][seed % 3]
    lr = [0.02, 0.03, 0.015][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 120
    n_cls = 6
    torch.manual_seed(seed)
    model = TrapCNN(chans, n_cls)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)
            nn.init.zeros_(m.bias)
    protos = torch.randn(n_cls, 3, 16, 16, generator=g) * 0.8
    protos = F.avg_pool2d(protos, 3, 1, 1) * 3.0
    x, y = _images(g, bs * steps, n_cls, protos)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
