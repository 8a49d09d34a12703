"""Disaster damage assessment: siamese CNN on pre/post-event building crops (xBD-style).

Domain: after a hurricane or earthquake, building footprints are cropped from pre- and
post-event satellite tiles and classified into no-damage / minor / major / destroyed (the xBD
Joint Damage Scale). A shared BN-free conv encoder embeds both crops; the classifier looks at
the difference and concatenation of the pooled embeddings. Trained with momentum SGD.

Mechanism: the encoder was ported from a Caffe-era prototxt whose convolutions use
weight_filler { type: "gaussian" std: 0.01 } and zero bias. For a 3x3 conv with C input
channels the fan-in is 9C (108-288 here), so each layer multiplies the activation scale by about
0.01 * sqrt(9C / 2) ~ 0.07-0.12. Over 5-7 conv layers without normalisation the signal reaching
the pooled embedding is ~1e-6 of the input from step 0, and the backward signal into the
early layers shrinks the same way. The classifier sees near-zero, input-independent features, so
only its bias learns and the cross-entropy stays at the class-prior entropy for the whole run.

ORIGIN: "encoder.0" -- the first convolution: the geometric shrinkage starts at the first
mis-initialised layer and compounds through every later one.

Fix: Kaiming (He) normal initialisation for the ReLU convolutions (the PyTorch-era default a
practitioner would use); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("xBD dataset (Gupta et al. 2019) siamese damage classifiers; Caffe gaussian std=0.01 "
          "filler in deep plain nets failing to train (He et al. 2015 'Delving deep into "
          "rectifiers', Simonyan & Zisserman VGG training notes)")


class SiameseDamageNet(nn.Module):
    def __init__(self, depth, width, n_classes, fixed):
        super().__init__()
        layers, c = [], 3
        for i in range(depth):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU()]
            if i in (1, 3):
                layers.append(nn.MaxPool2d(2))
            c = width
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.encoder = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(2 * width, 64), nn.ReLU(), nn.Linear(64, n_classes))
        for m in self.encoder.modules():
            if isinstance(m, nn.Conv2d):
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, std=0.01)      # Caffe gaussian filler
                nn.init.zeros_(m.bias)

    def forward(self, pre, post):
        a, b = self.encoder(pre), self.encoder(post)
        return self.classifier(torch.cat([b - a, b], -1))


def _crops(g, n, size):
    y = torch.randint(0, 4, (n,), generator=g)
    ground = 0.3 + 0.1 * torch.rand(n, 3, 1, 1, generator=g)
    pre = ground + 0.05 * torch.randn(n, 3, size, size, generator=g)
    lo, hi = size // 4, 3 * size // 4
    roof = 0.5 + 0.3 * torch.rand(n, 3, 1, 1, generator=g)
    pre[:, :, lo:hi, lo:hi] = roof + 0.05 * torch.randn(n, 3, hi - lo, hi - lo, generator=g)
    post = pre + 0.05 * torch.randn(n, 3, size, size, generator=g)
    # damage: fraction of roof replaced by debris texture grows with the class
    frac = (y.float() / 3.0).view(-1, 1, 1, 1)
    debris = (torch.rand(n, 1, hi - lo, hi - lo, generator=g) < frac).float()
    rubble = 0.35 + 0.25 * torch.rand(n, 3, hi - lo, hi - lo, generator=g)
    post[:, :, lo:hi, lo:hi] = debris * rubble + (1 - debris) * post[:, :, lo:hi, lo:hi]
    return (pre, post), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [6, 5, 7][seed % 3]
    width = [16, 24, 12][seed % 3]
    batch = [24, 32, 20][seed % 3]
    lr = [0.01, 0.015, 0.02][seed % 3]
    size = 16
    steps = 120

    batches = [_crops(g, batch, size) for _ in range(steps)]
    model = SiameseDamageNet(depth, width, 4, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
