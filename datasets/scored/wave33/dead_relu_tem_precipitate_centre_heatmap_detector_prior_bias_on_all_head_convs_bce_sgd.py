"""Precipitate / dislocation-loop detection in bright-field TEM micrographs of irradiated
alloys: a CenterNet / RetinaNet-style dense detector (small conv backbone + classification
subnet of 3x3 conv + ReLU blocks + a final 3x3 conv giving a per-location "precipitate centre
here" logit), trained with per-pixel BCE-with-logits on the centre heatmap, SGD with
momentum 0.9.

Mechanism: RetinaNet / CenterNet initialise the subnet convs with N(0, 0.01) weights and zero
bias, and only the *final* classification conv gets the prior bias b = -log((1 - pi) / pi) (here pi is
the measured areal fraction of precipitate-centre pixels, a few %, b ~ -3) so that the rare-foreground loss does not explode at step 0. In this port the init
loop runs over every Conv2d of the classification subnet and gives all of them the prior bias.
The hidden subnet convs therefore start with pre-activations of ~N(0, small) - 3 < 0 at
every pixel of every image: every ReLU of the subnet outputs exactly 0 from step 0, receives no
gradient, and can never turn on. Only the final conv's bias can learn, so the detector
predicts the same foreground probability everywhere -- which the prior init already set to
the foreground fraction -- and the BCE stays at the "prior-only" level for the whole run. No value is non-finite.

ORIGIN: `cls_subnet.1`, the first ReLU of the classification subnet: the first layer whose units
are all dead, and the point below which no gradient reaches the backbone.

Fix: zero bias for the hidden subnet convs; the prior bias only on the final `cls_logits`
conv (the RetinaNet init). Same model, data, optimizer and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "cls_subnet.1"
SOURCE = ("Known pattern: RetinaNet / CenterNet prior-probability bias init (Lin et al. 2017, "
          "Sec. 4.1; CenterNet's -2.19 heatmap bias) applied to every conv of the head instead of "
          "only the last one, killing the ReLUs (user issues on 'heatmap loss not decreasing, head "
          "outputs constant'); "
          "dense detectors for defects / precipitates in TEM of irradiated steels (e.g. "
          "Li et al. 2018, Jacobs et al. 2022 dislocation-loop detection).")


class DenseDetector(nn.Module):
    def __init__(self, ch, n_sub):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
        )
        sub = []
        for _ in range(n_sub):
            sub += [nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()]
        self.cls_subnet = nn.Sequential(*sub)
        self.cls_logits = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x):
        return self.cls_logits(self.cls_subnet(self.backbone(x))).squeeze(1)


def _micrographs(g, n, size=24):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    imgs, heat = [], []
    for _ in range(n):
        k = int(torch.randint(2, 5, (1,), generator=g))
        img = 0.1 * torch.randn(size, size, generator=g)
        # thickness-fringe background
        img += 0.3 * torch.sin(xx / (3 + 3 * torch.rand(1, generator=g)) + yy / 7)
        t = torch.zeros(size, size)
        for _ in range(k):
            cy, cx = (torch.rand(2, generator=g) * (size - 6) + 3).tolist()
            r = 1.5 + 1.5 * float(torch.rand(1, generator=g))
            d2 = (yy - cy) ** 2 + (xx - cx) ** 2
            img -= 1.2 * torch.exp(-d2 / (2 * r ** 2))          # dark strain contrast
            t = torch.maximum(t, (d2 <= 1.5 ** 2).float())
        imgs.append(img)
        heat.append(t)
    return torch.stack(imgs).unsqueeze(1), torch.stack(heat)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [8, 12, 16][seed % 3]
    n_sub = [1, 2, 1][seed % 3]
    lr = [0.3, 0.4, 0.4][seed % 3]
    bs = [8, 12, 16][seed % 3]
    steps = 200
    torch.manual_seed(seed)
    model = DenseDetector(ch, n_sub)
    x, t = _micrographs(g, 300)
    prior = float(t.mean())            # areal fraction of foreground locations
    b_prior = -math.log((1 - prior) / prior)
    for m in model.backbone.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
    for m in list(model.cls_subnet.modules()) + [model.cls_logits]:
        if isinstance(m, nn.Conv2d):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.constant_(m.bias, b_prior if not fixed else 0.0)
    nn.init.constant_(model.cls_logits.bias, b_prior)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], t[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    loss_fn = nn.BCEWithLogitsLoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
