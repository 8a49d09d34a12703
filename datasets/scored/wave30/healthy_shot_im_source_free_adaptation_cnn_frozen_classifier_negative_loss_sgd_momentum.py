"""Source-free test-time adaptation with SHOT's information-maximisation objective (SHOT-IM): a
small CNN trained on clean source images is adapted to a shifted target stream (lower contrast,
blur and sensor noise) without labels.  As in SHOT, the classifier ("hypothesis") is frozen and
only the feature extractor and its bottleneck are updated, by SGD with momentum, on
L = mean_x H(p(y|x)) - H(mean_x p(y|x)): confident individual predictions, diverse over the batch.

Healthy, but easy to misread: the objective is an entropy *minus* a diversity entropy, so it is
negative from the first step (about -0.5 to -1) and keeps decreasing towards -log(C) as the
adapted features become confident and class-balanced; a monitor that expects a positive loss
falling towards zero sees a negative, "diverging" value.  The labels in the batches are never
used by the loss.

ORIGIN = None: nothing fails.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("SHOT (Liang et al. ICML 2020, 'Do we really need to access the source data?'): frozen "
          "hypothesis, information-maximisation loss = entropy - diversity, which is negative by "
          "construction; target corruptions as in CIFAR-10-C.")


class FeatureNet(nn.Module):
    def __init__(self, c1, c2, bottleneck):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.BatchNorm2d(c2), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.bottleneck = nn.Sequential(nn.Linear(c2 * 16, bottleneck), nn.BatchNorm1d(bottleneck))

    def forward(self, x):
        return self.bottleneck(self.conv(x).flatten(1))


class SHOTModel(nn.Module):
    def __init__(self, c1, c2, bottleneck, n_classes):
        super().__init__()
        self.features = FeatureNet(c1, c2, bottleneck)
        self.classifier = nn.utils.parametrizations.weight_norm(nn.Linear(bottleneck, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def _digits(g, n, n_classes, protos, shifted):
    y = torch.randint(0, n_classes, (n,), generator=g)
    img = protos[y]
    dx, dy = torch.randint(-2, 3, (2,), generator=g).tolist()
    img = torch.roll(img, shifts=(dx, dy), dims=(2, 3))
    img = img * (0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=g))
    if shifted:  # target domain: low contrast, blur, sensor noise, offset
        img = 0.5 * F.avg_pool2d(img, 3, stride=1, padding=1) + 0.3
        img = img + 0.35 * torch.randn(img.shape, generator=g)
    else:
        img = img + 0.1 * torch.randn(img.shape, generator=g)
    return img, y


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5151 + seed)
    c1 = pick(1, [8, 12, 16])
    c2 = pick(2, [16, 24, 32])
    bottleneck = pick(3, [32, 64, 48])
    lr = pick(4, [2e-2, 1.5e-2, 3e-2])
    batch = pick(5, [64, 96, 128])
    steps = 100
    n_classes = 6

    protos = (torch.rand(n_classes, 1, 16, 16, generator=g) < 0.3).float()
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1) * 2.0

    model = SHOTModel(c1, c2, bottleneck, n_classes)
    # ---- source training (done before deployment) ----
    opt_src = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for _ in range(120):
        x, y = _digits(g, 64, n_classes, protos, shifted=False)
        opt_src.zero_grad()
        F.cross_entropy(model(x), y, label_smoothing=0.1).backward()
        opt_src.step()

    # ---- SHOT: freeze the hypothesis, adapt the feature extractor on the target stream ----
    for p in model.classifier.parameters():
        p.requires_grad_(False)
    batches = [_digits(g, batch, n_classes, protos, shifted=True) for _ in range(steps)]

    def im_loss(logits, _unused_labels):
        p = F.softmax(logits, -1)
        ent = -(p * torch.log(p + 1e-5)).sum(-1).mean()
        p_mean = p.mean(0)
        div = -(p_mean * torch.log(p_mean + 1e-5)).sum()
        return ent - div

    optimizer = torch.optim.SGD(model.features.parameters(), lr=lr, momentum=0.9,
                                weight_decay=1e-3, nesterov=True)
    return {"model": model, "optimizer": optimizer, "loss_fn": im_loss,
            "batches": batches, "steps": steps}
