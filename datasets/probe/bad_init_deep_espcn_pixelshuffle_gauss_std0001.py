"""Deep plain ESPCN-style x2 super-resolution net (10 conv3x3+ReLU layers at LR resolution,
last conv to r^2 channels, PixelShuffle, global bilinear skip) trained with Adam.
Weights are initialised the SRCNN/FSRCNN Caffe way, Gaussian std=0.001 for every conv.
With fan-in 288 each layer scales activations by ~0.012, so after ten layers the residual
branch outputs ~1e-19 and the gradients of the lower layers vanish just as fast (far below
Adam's eps): the branch never wakes up and the loss sits at the bilinear baseline.
fixed=True: He (kaiming-normal, relu gain) init for every conv; nothing else changes.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "body.0"
SOURCE = (
    "Known pattern: SRCNN/FSRCNN (Dong et al. 2014/2016) initialise conv filters from a Gaussian "
    "with std 0.001; VDSR (Kim et al. 2016) reports that deeper SRCNN-style nets do not converge "
    "this way; He et al. 2015 (kaiming init) for deep plain ReLU nets; "
    "ESPCN sub-pixel head (Shi et al. 2016)"
)


class DeepESPCN(nn.Module):
    def __init__(self, fixed, ch=32, depth=10, scale=2):
        super().__init__()
        self.scale = scale
        layers, cin = [], 1
        for _ in range(depth):
            layers += [nn.Conv2d(cin, ch, 3, padding=1), nn.ReLU()]
            cin = ch
        self.body = nn.Sequential(*layers)
        self.to_sub = nn.Conv2d(ch, scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, mean=0.0, std=0.001)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        base = F.interpolate(x, scale_factor=self.scale, mode="bilinear", align_corners=False)
        return base + self.shuffle(self.to_sub(self.body(x)))


def _make_batch(g, bs, hr=24):
    # binary block scenes (scanned-document / QR-like): random +-1 cells of 3x3 pixels at a random
    # offset, so cell edges fall between the 2x2 LR pixels and bilinear upsampling blurs every edge
    cells = torch.where(torch.rand(bs, 1, 9, 9, generator=g) < 0.5, -1.0, 1.0)
    img = F.interpolate(cells, scale_factor=3, mode="nearest")
    oy, ox = torch.randint(0, 3, (2,), generator=g).tolist()
    img = img[:, :, oy : oy + hr, ox : ox + hr]
    return F.avg_pool2d(img, 2), img


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    model = DeepESPCN(fixed)
    steps = 160
    batches = [_make_batch(g, 24) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(
        model=model,
        optimizer=opt,
        loss_fn=nn.MSELoss(),
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
