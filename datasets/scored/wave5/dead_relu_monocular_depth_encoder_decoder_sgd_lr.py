"""Norm-free ReLU encoder-decoder regressing MiDaS-style relative inverse depth (disparity with the
per-image median removed and divided by its mean absolute deviation) of a synthetic scene (receding
ground plane plus boxes) from a shaded grey-level image, trained with MSE and SGD + momentum at lr 0.3.
The first momentum steps overshoot; the correction drives the pre-activations of the last decoder
block (the ReLU decoder.3) negative at every pixel of every image. From then on those ReLUs output
exactly zero, every weight before them gets exactly zero gradient, and only the 3x3 head bias can
still move: the prediction is a constant and the loss plateaus at the variance of the targets
(no NaN). Fix: a 10x lower learning rate (0.03)."""
import torch
import torch.nn as nn

LR_BAD, LR_FIX = 0.3, 0.03
CAUSE = "dead_relu"
ORIGIN = "decoder.3"
SOURCE = ("Dying ReLU after a large SGD update (CS231n notes; Lu et al. 2019 'Dying ReLU and "
          "initialization'); depth-regression forum threads where a too-high lr gives a constant depth map")


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(16, 16, 4, stride=2, padding=1), nn.ReLU(),
        )
        self.head = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x):
        return self.head(self.decoder(self.encoder(x)))


def _scenes(g, n, S=24):
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    horizon = (4 + 6 * torch.rand(n, 1, 1, generator=g))
    ground = torch.where(yy > horizon, 1.5 + 6.5 * (S - yy) / (S - horizon + 1e-3), torch.full_like(yy, 8.0))
    depth = ground.clone()
    img = 0.3 + 0.7 * (8.0 - depth) / 8.0
    for i in range(n):
        for _ in range(2):
            y0, x0 = int(torch.randint(6, S - 6, (1,), generator=g)), int(torch.randint(0, S - 6, (1,), generator=g))
            h, w = int(torch.randint(3, 7, (1,), generator=g)), int(torch.randint(3, 7, (1,), generator=g))
            d = 1.5 + 3 * float(torch.rand(1, generator=g))
            depth[i, y0:y0 + h, x0:x0 + w] = torch.minimum(depth[i, y0:y0 + h, x0:x0 + w], torch.tensor(d))
            img[i, y0:y0 + h, x0:x0 + w] = 0.3 + 0.7 * (8.0 - d) / 8.0 + 0.1
    img = img + 0.03 * torch.randn(n, S, S, generator=g)
    disp = 1.0 / depth                                          # MiDaS-style relative inverse depth:
    med = disp.flatten(1).median(1).values[:, None, None]       # per-image shift (median) and
    mad = (disp - med).abs().flatten(1).mean(1)[:, None, None]  # scale (mean abs deviation) removed
    return img[:, None], ((disp - med) / mad)[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DepthNet()
    imgs, depth = _scenes(g, 256)
    steps, bs = 120, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, imgs.shape[0], (bs,), generator=g)
        batches.append((imgs[idx], depth[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=LR_FIX if fixed else LR_BAD, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
