"""Norm-free depthwise-separable CNN (MobileNet-style blocks, He init, global max pooling; no BatchNorm,
as in a small edge-deployment model) classifying 8-bit fluorescence-microscopy crops scaled to [0, 1]
by /255. One acquisition session was exported as 16-bit TIFF but went through the same /255 loader:
in the batch at step 45, four crops carry 16 hot/saturated pixels each at 65535/255 = 257 instead of
<= 1. The stem conv (features.0) turns those few pixels into activations hundreds of times
larger than their neighbours', max pooling carries them straight to the logits, the cross-entropy jumps by two orders of magnitude
and one SGD-momentum step with gradients 100x larger than normal wrecks the trained filters: most
ReLU units go silent (the pooled features end all-zero) and the classifier falls back to chance level for the rest of the run (a spike
followed by a flat stall, no NaN). All other batches are clean. Fix: clip the corrupt batch to the
valid intensity range [0, 1]."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = ("Mixed 8-bit/16-bit microscopy exports (e.g. CellProfiler / ImageJ forum threads on 16-bit TIFFs "
          "read with the 8-bit normalisation); hot pixels at the sensor maximum")


def dwsep(cin, cout, stride):
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin), nn.ReLU(),
        nn.Conv2d(cin, cout, 1), nn.ReLU(),
    )


class TinyMobileNet(nn.Module):
    def __init__(self, n_class=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
            dwsep(16, 32, 1), dwsep(32, 48, 2), dwsep(48, 64, 2),
        )
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.classifier = nn.Linear(64, n_class)

    def forward(self, x):
        return self.classifier(self.pool(self.features(x)).flatten(1))


def _cells(g, n, S=32):
    """Four phenotypes: many small nuclei, one large nucleus, elongated cells, diffuse background."""
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    imgs = torch.zeros(n, 1, S, S)
    labels = torch.randint(0, 4, (n,), generator=g)
    for i in range(n):
        c = int(labels[i])
        if c == 0:
            for _ in range(6):
                cy, cx = torch.rand(2, generator=g) * S
                imgs[i, 0] += torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 4)
        elif c == 1:
            cy, cx = 8 + torch.rand(2, generator=g) * 16
            imgs[i, 0] += torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 40)
        elif c == 2:
            for _ in range(2):
                cy, cx = torch.rand(2, generator=g) * S
                imgs[i, 0] += torch.exp(-((yy - cy) ** 2) / 3 - ((xx - cx) ** 2) / 60)
        else:
            imgs[i, 0] += 0.3 + 0.1 * torch.rand(1, generator=g)
    imgs = (imgs.clamp(0, 1) * 0.85 + 0.08 * torch.rand(n, 1, S, S, generator=g))
    return (imgs * 255).round() / 255, labels          # genuine 8-bit quantised data in [0, 1]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyMobileNet()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu"); nn.init.zeros_(m.bias)
    imgs, labels = _cells(g, 384)
    steps, bs, bad_step = 100, 16, 45
    batches = []
    for s in range(steps):
        idx = torch.randint(0, imgs.shape[0], (bs,), generator=g)
        x, y = imgs[idx].clone(), labels[idx]
        if s == bad_step:                  # 16-bit export read through the 8-bit loader
            for i in range(4):
                r = torch.randint(0, 32, (16,), generator=g); c = torch.randint(0, 32, (16,), generator=g)
                x[i, 0, r, c] = 65535.0 / 255.0
            if fixed:
                x = x.clamp(0.0, 1.0)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
