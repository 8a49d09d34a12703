"""A CIFAR-size AlexNet (5 convs with ReLU, LocalResponseNorm after conv1/conv2,
overlapping max-pooling, two dropout FC layers; no BatchNorm; kaiming_normal_ (fan_in, relu) weights and zero
biases), trained with the SGD recipe copied from a ResNet/BN training script: lr 0.1,
momentum 0.9, weight decay 5e-4. AlexNet's own recipe is lr 0.01; the 0.1 only works
for networks with BatchNorm.

Mechanism: the first updates at lr 0.1 (with momentum, effectively 1.0) are huge
relative to the weights; conv and FC pre-activations are pushed to large negative
values, more and more ReLUs output exact zeros for every input and stop receiving
gradient. Within ~15 steps the ReLU after conv5 is (nearly) entirely dead, so the
classifier receives an all-zero feature map, nothing below it gets a gradient any more,
and the loss freezes at ~log(10) (only the output bias still learns the class prior).

ORIGIN: features.13, the ReLU after conv5 (the last conv): it is the layer that dies
completely (88-100% of its channels never fire) and whose death disconnects the whole
feature extractor from the loss; the hidden-FC ReLUs (classifier.2/5) follow.

Fix: lr 0.01 (the AlexNet recipe); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.13"
SOURCE = ("Krizhevsky et al. 2012 AlexNet (lr 0.01, no BN); "
          "He et al. 2016 ResNet recipe lr 0.1 reused on a BN-free net; "
          "forum reports 'AlexNet loss stuck at 2.302 / all ReLU outputs zero'.")


class AlexNet(nn.Module):
    def __init__(self, w, hidden, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 5, padding=2), nn.ReLU(inplace=True),
            nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=2.0), nn.MaxPool2d(3, 2, padding=1),
            nn.Conv2d(w, 2 * w, 5, padding=2), nn.ReLU(inplace=True),
            nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=2.0), nn.MaxPool2d(3, 2, padding=1),
            nn.Conv2d(2 * w, 3 * w, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(3 * w, 3 * w, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(3 * w, 2 * w, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, padding=1))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(2 * w * 4 * 4, hidden), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(hidden, hidden), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(hidden, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.features(x))


def make_batches(g, steps, bs, num_classes=10):
    protos = torch.randn(num_classes, 3, 4, 4, generator=g)
    out = []
    for _ in range(steps):
        y = torch.randint(0, num_classes, (bs,), generator=g)
        x = F.interpolate(protos[y], size=32, mode="bilinear", align_corners=False)
        x = x + 0.4 * torch.randn(bs, 3, 32, 32, generator=g)
        out.append((x, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [8, 12, 8][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [100, 110, 90][seed % 3]
    lr = 0.01 if fixed else [0.1, 0.1, 0.08][seed % 3]
    model = AlexNet(w, hidden)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_batches(g, steps, bs), steps=steps)
