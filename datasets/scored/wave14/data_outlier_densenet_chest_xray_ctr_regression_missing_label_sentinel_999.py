"""A small DenseNet-BC (CheXNet-style: dense blocks, BN-ReLU-conv, transition layers, global
average pooling) regressing the cardiothoracic ratio (CTR, ~0.35-0.65) from chest X-rays
with MSE and SGD + momentum.

Mechanism: the CTR labels come from a radiology spreadsheet where unmeasured studies carry
the placeholder 999. The label loader filters NaN but not the sentinel, and only one shard
has such rows, so a single batch midway through training has a few targets of 999 among
values of ~0.5. That batch's MSE is ~1e5 times the normal loss; its gradient throws the head
and (through BatchNorm) the trunk far away in one momentum-SGD step, after which the
predictions are off by hundreds, the following steps overshoot back and forth and the loss
either overflows to inf/NaN or freezes far above where it was (ReLUs behind the exploded
weights die).

ORIGIN: None -- a handful of corrupt target values in one batch, not a module, are the cause.

Fix: drop the rows with the 999 placeholder from that batch (the usual
``df = df[df.ctr < 1.5]`` filter); every other sample and step is unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Known pattern: clinical label spreadsheets using 999 as a 'not measured' "
          'placeholder that survives a NaN-only filter into a regression target (CTR / bone '
          'age / ejection fraction); fixed by filtering the sentinel rows')


class DenseLayer(nn.Module):
    def __init__(self, c_in, growth):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(c_in)
        self.conv1 = nn.Conv2d(c_in, 4 * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(4 * growth)
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x):
        y = self.conv1(F.relu(self.norm1(x)))
        y = self.conv2(F.relu(self.norm2(y)))
        return torch.cat([x, y], 1)


class Transition(nn.Sequential):
    def __init__(self, c_in, c_out):
        super().__init__(nn.BatchNorm2d(c_in), nn.ReLU(inplace=True),
                         nn.Conv2d(c_in, c_out, 1, bias=False), nn.AvgPool2d(2))


class DenseNetBC(nn.Module):
    def __init__(self, growth, block_cfg):
        super().__init__()
        c = 2 * growth
        feats = [nn.Conv2d(1, c, 5, stride=2, padding=2, bias=False), nn.BatchNorm2d(c),
                 nn.ReLU(inplace=True), nn.MaxPool2d(2)]
        for i, n in enumerate(block_cfg):
            for _ in range(n):
                feats.append(DenseLayer(c, growth))
                c += growth
            if i < len(block_cfg) - 1:
                feats.append(Transition(c, c // 2))
                c //= 2
        feats += [nn.BatchNorm2d(c), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*feats)
        self.regressor = nn.Linear(c, 1)

    def forward(self, x):
        f = F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.regressor(f).squeeze(1)


def make_batch(g, bs, size):
    """Synthetic frontal CXR: two dark lung fields inside a bright thorax, a bright heart
    shadow of variable width; CTR = heart width / thorax width."""
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    imgs, ctrs = [], []
    for _ in range(bs):
        tw = 0.75 + 0.2 * float(torch.rand(1, generator=g))           # thorax half-width
        ctr = 0.35 + 0.3 * float(torch.rand(1, generator=g))
        hw = ctr * tw                                                    # heart half-width
        cx = 0.1 * (float(torch.rand(1, generator=g)) - 0.5)
        thorax = ((xx / tw) ** 2 + (yy / 0.9) ** 2) < 1
        lungs = (((xx.abs() - tw / 2) / (tw / 2.3)) ** 2 + ((yy + 0.1) / 0.7) ** 2) < 1
        heart = (((xx - cx) / hw) ** 2 + ((yy - 0.35) / 0.4) ** 2) < 1
        img = 0.8 * thorax.float() - 0.55 * lungs.float() + 0.5 * heart.float()
        img = img + 0.05 * torch.randn(size, size, generator=g)
        imgs.append(img.clamp(0, 1))
        ctrs.append(ctr)
    return torch.stack(imgs)[:, None], torch.tensor(ctrs)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(growth=8, blocks=(3, 3), lr=0.02, bs=16, steps=60, bad_step=27, n_bad=3),
        dict(growth=6, blocks=(2, 4, 3), lr=0.01, bs=12, steps=70, bad_step=40, n_bad=2),
        dict(growth=12, blocks=(4, 4), lr=0.03, bs=16, steps=50, bad_step=18, n_bad=4),
    ][seed % 3]
    torch.manual_seed(seed)
    model = DenseNetBC(cfg["growth"], cfg["blocks"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True)
    g = torch.Generator().manual_seed(300 + seed)
    batches = [make_batch(g, cfg["bs"], 48) for _ in range(cfg["steps"])]
    x, y = batches[cfg["bad_step"]]
    y[: cfg["n_bad"]] = 999.0                     # "not measured" placeholder from the sheet
    if fixed:
        keep = y < 1.5
        batches[cfg["bad_step"]] = (x[keep], y[keep])
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
