"""Next-day wildfire-spread segmentation CNN whose logit head ends in a ReLU (copied conv block),
trained with BCEWithLogitsLoss: the logit ReLUs die and the fire map is stuck at p = 0.5.

Mechanism: the model follows the "Next Day Wildfire Spread" setup -- 12 input rasters
(elevation, wind u/v, ERC, drought index, NDVI, temperature, humidity, precipitation,
population, previous-day fire mask, ...) on 32x32 tiles, predicting tomorrow's fire mask.  The
author builds the head from the same ``conv_block`` helper used in the encoder, so the 1x1
logit conv is followed by ``nn.ReLU()`` before BCEWithLogitsLoss.  Logits can then only be
>= 0 (p >= 0.5).  ~90 % of pixels are unburnt, so the loss pushes the logit conv's outputs
down; as soon as a pixel's pre-activation crosses zero its gradient is exactly zero.  Often
most pixels are already below zero at initialisation, and within a few AdamW steps every
pixel of every tile is clamped to logit 0 -- the head is dead,
nothing upstream gets a gradient any more, and the loss freezes at log 2 ~ 0.693 while the
fixed model reaches ~0.1.

ORIGIN: ``head.1`` -- the ReLU that follows the logit convolution; it is where the units die
and where gradient flow to the whole network stops.

Fix: drop the trailing ReLU (an Identity keeps the module names; the logit conv outputs raw
logits); everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("Huot et al. 2022 'Next Day Wildfire Spread: a machine learning dataset to predict wildfire "
          "spreading from remote-sensing data' (IEEE TGRS); trailing-activation-on-logits bug from "
          "reusing a conv+ReLU block for the output layer (common in segmentation code reviews).")


def conv_block(cin, cout, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2), nn.ReLU())


class FireSpreadCNN(nn.Module):
    def __init__(self, cin, width, depth, fixed):
        super().__init__()
        blocks, c = [], cin
        for _ in range(depth):
            blocks.append(conv_block(c, width))
            c = width
        self.encoder = nn.Sequential(*blocks)
        if fixed:
            self.head = nn.Sequential(nn.Conv2d(width, 1, 1), nn.Identity())
        else:
            self.head = conv_block(width, 1, k=1)

    def forward(self, x):
        return self.head(self.encoder(x)).squeeze(1)


def _tiles(n, size, g):
    prev = torch.zeros(n, 1, size, size)
    cx = torch.randint(8, size - 8, (n,), generator=g)
    cy = torch.randint(8, size - 8, (n,), generator=g)
    r = torch.randint(2, 5, (n,), generator=g)
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    for i in range(n):
        prev[i, 0] = (((yy - cy[i]) ** 2 + (xx - cx[i]) ** 2) <= r[i] ** 2).float()
    wind = torch.randn(n, 2, generator=g)
    wind = wind / wind.norm(dim=1, keepdim=True)
    fuel = torch.rand(n, 1, size, size, generator=g)
    fuel = F.avg_pool2d(fuel, 5, 1, 2)
    fuel = (fuel - fuel.mean()) / fuel.std()
    humid = torch.randn(n, 1, 1, 1, generator=g).expand(n, 1, size, size)
    # spread: dilate the fire front downwind, only where fuel is dry enough
    shift = torch.round(2 * wind).long()
    nxt = prev.clone()
    for i in range(n):
        moved = torch.roll(prev[i, 0], shifts=(int(shift[i, 1]), int(shift[i, 0])), dims=(0, 1))
        grown = F.max_pool2d(moved[None, None], 3, 1, 1)[0, 0]
        nxt[i, 0] = torch.clamp(prev[i, 0] + grown * (fuel[i, 0] - 0.5 * humid[i, 0] > -0.3).float(), 0, 1)
    other = torch.randn(n, 7, size, size, generator=g)  # elevation, ERC, PDSI, temp, precip, pop, NDVI
    x = torch.cat([prev, wind[:, :, None, None].expand(n, 2, size, size), fuel, humid, other], 1)
    return x, nxt[:, 0]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(66 + seed)
    torch.manual_seed(seed)
    width = [24, 32, 16][seed % 3]
    depth = [3, 4, 4][seed % 3]
    batch = [8, 6, 10][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    steps, size = 120, 32
    x, y = _tiles(steps * batch, size, g)
    model = FireSpreadCNN(x.shape[1], width, depth, fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.BCEWithLogitsLoss(), "batches": batches,
            "steps": steps}
