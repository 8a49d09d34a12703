"""VDSR-style residual super-resolution (Kim et al. 2016): a plain stack of 3x3 conv + ReLU
layers takes the bilinearly upsampled low-resolution image and predicts the missing high-
frequency residual (HR - upsampled LR); the output conv is zero-initialised so the model starts
as plain upsampling. VDSR trains with SGD at lr 0.1 plus adjustable gradient clipping; this
reimplementation switched to Adam but kept an lr of the paper's order (5e-2). Adam's first
steps move every weight by ~lr regardless of gradient scale, which for 3x3 kernels of a 16-
channel layer is a huge relative change: the residual blows up for a few steps, then the ReLU
layers collapse one after another (body.3, the second ReLU, is the first where three quarters
of the channels are zero for every pixel, within ~6 steps; by the end most channels of every
layer are dead and at least one layer is entirely dark), the network outputs a near-constant
residual, and the loss falls back to the variance of the residual and stays there - a silent
plateau with no NaN. The same run with Adam at 1e-3 trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "body.3"
SOURCE = ("VDSR (Kim et al., CVPR 2016) lr 0.1 with adjustable gradient clipping; known pattern of "
          "ReLU nets dying when Adam is run at an SGD-scale lr")


class VDSRLite(nn.Module):
    def __init__(self, depth=6, ch=16):
        super().__init__()
        layers = [nn.Conv2d(1, ch, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.tail = nn.Conv2d(ch, 1, 3, padding=1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        nn.init.zeros_(self.tail.weight)             # residual branch starts at zero

    def forward(self, lr_up):
        return self.tail(self.body(lr_up))           # predicted residual


def _batch(g, n=16, hw=16):
    hr = F.interpolate(torch.rand(n, 1, 6, 6, generator=g), size=(hw, hw), mode="bicubic", align_corners=False)
    hr = (hr + 0.15 * torch.rand(n, 1, hw, hw, generator=g)).clamp(0, 1)
    lr_up = F.interpolate(F.avg_pool2d(hr, 2), size=(hw, hw), mode="bilinear", align_corners=False)
    return lr_up, hr - lr_up


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VDSRLite()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 5e-2)
    steps = 150
    batches = [_batch(g) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
