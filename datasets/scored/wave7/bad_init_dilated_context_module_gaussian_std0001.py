"""Dense prediction with a Yu & Koltun style dilated "context module": a small front-end conv
produces a 16-channel feature map on a 24x24 grid, and a stack of 3x3 convolutions with
dilations 1,1,2,4,8,1 followed by a 1x1 conv aggregates multi-scale context (the label of a
pixel is whether the mean intensity of its 9x9 neighbourhood is positive, so local evidence
alone is weak). The context module was initialised the way the classification layers of the
original Caffe models were, normal(0, 0.001) for every conv. With 16 channels and 3x3 kernels
each layer multiplies the activation scale by ~0.001 * sqrt(9 * 16) ~ 0.01, so the context
output is ~1e-13 of its input at step 0, the backward signal shrinks the same way, and plain
momentum SGD barely moves the weights: the per-pixel cross-entropy stays at its starting value
(silent stall). The paper itself reports that random init did not work for this module.
Fixed: the same convs initialised with kaiming-normal (fan_in, relu); nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "context.0"
SOURCE = ("Yu & Koltun 2016 'Multi-scale context aggregation by dilated convolutions' (sec. 3: "
          "standard random initialisation of the context module failed); Caffe-era gaussian std=0.001 conv fillers")

C = 16


class ContextNet(nn.Module):
    def __init__(self, kaiming):
        super().__init__()
        self.frontend = nn.Sequential(nn.Conv2d(1, C, 3, 1, 1), nn.ReLU(), nn.Conv2d(C, C, 3, 1, 1), nn.ReLU())
        layers = []
        for d in (1, 1, 2, 4, 8, 1):
            layers += [nn.Conv2d(C, C, 3, 1, d, dilation=d), nn.ReLU()]
        layers += [nn.Conv2d(C, 2, 1)]
        self.context = nn.Sequential(*layers)
        for m in self.context:
            if isinstance(m, nn.Conv2d):
                if kaiming:
                    nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, 0.0, 0.001)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.context(self.frontend(x))


def _make_data(g, n, res=24):
    # smooth random field + strong pixel noise; label = sign of the 9x9 local mean of the field
    z = torch.randn(n, 1, res // 6, res // 6, generator=g)
    field = F.interpolate(z, size=(res, res), mode="bilinear", align_corners=False)
    x = field + 1.0 * torch.randn(n, 1, res, res, generator=g)
    local = F.avg_pool2d(field, 9, 1, 4, count_include_pad=False)
    y = (local > 0).long().squeeze(1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    x, y = _make_data(g, 256)
    steps, bs = 140, 12
    batches = [(x[(s * bs) % 256:(s * bs) % 256 + bs], y[(s * bs) % 256:(s * bs) % 256 + bs]) for s in range(steps)]
    model = ContextNet(kaiming=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
