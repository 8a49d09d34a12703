"""DnCNN-style residual denoiser (conv-ReLU stack predicting the noise, no BatchNorm,
as in the 'DnCNN without BN' ablation / many light re-implementations), initialised with
the hand-written He-normal loop adapted from the old torchvision / pytorch-classification
ResNet code (switched to fan-in):

    n = m.kernel_size[0] * m.kernel_size[1] * m.in_channels
    m.weight.data.normal_(0, math.sqrt(2. / n))

but with the channel factor lost while editing, so n = 9 and every 3x3 conv gets
std = sqrt(2/9) ~ 0.47 instead of sqrt(2/(9*C)). Loss: sum-reduced MSE / (2*batch),
as in the DnCNN-PyTorch reference training script.

Mechanism: each conv multiplies the activation RMS by ~sqrt(9*C*0.22/2) ~ 3-5, so the
residual (noise) prediction at the output is ~1e5-1e7 at step 0, the MSE is ~1e11+ and
the first momentum-SGD step, scaled by that loss, throws the weights to inf/NaN.
Growth is geometric with depth from the very first forward pass.

ORIGIN: layers.0, the first conv: the explosion starts there and compounds through every
following (equally mis-initialised) conv.

Fix: the intended n = k*k*in_channels (He fan-in init); nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Zhang et al. 2017 DnCNN (residual learning denoiser); hand-written He init loop "
          "from torchvision<=0.2 resnet.py / bearpaw pytorch-classification with the "
          "channel factor dropped (fan computed from the kernel size only).")


class DnCNN(nn.Module):
    def __init__(self, depth, width, channels=1):
        super().__init__()
        layers = [nn.Conv2d(channels, width, 3, padding=1), nn.ReLU(inplace=True)]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU(inplace=True)]
        layers.append(nn.Conv2d(width, channels, 3, padding=1))
        self.layers = nn.Sequential(*layers)

    def forward(self, noisy):
        return noisy - self.layers(noisy)  # residual learning: the stack predicts the noise


def make_batches(g, steps, bs, size, sigma):
    out = []
    for _ in range(steps):
        # smooth piecewise images: low-res random field upsampled, in [0, 1]
        low = torch.rand(bs, 1, size // 4, size // 4, generator=g)
        clean = nn.functional.interpolate(low, size=size, mode="bilinear", align_corners=False)
        noisy = clean + sigma * torch.randn(bs, 1, size, size, generator=g)
        out.append((noisy, clean))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    depth = [10, 8, 12][seed % 3]
    width = [16, 20, 16][seed % 3]
    lr = [1e-3, 2e-4, 5e-4][seed % 3]
    bs = [8, 12, 8][seed % 3]
    steps = 80
    model = DnCNN(depth, width)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                n = m.kernel_size[0] * m.kernel_size[1] * m.in_channels
            else:
                n = m.kernel_size[0] * m.kernel_size[1]
            m.weight.data.normal_(0, math.sqrt(2.0 / n))
            m.bias.data.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    mse_sum = nn.MSELoss(reduction="sum")

    def loss_fn(out, clean):  # DnCNN-PyTorch: sum-reduced MSE / (2 * batch)
        return mse_sum(out, clean) / (2 * out.shape[0])

    return dict(model=model, optimizer=opt, loss_fn=loss_fn,
                batches=make_batches(g, steps, bs, 24, 50.0 / 255.0), steps=steps)
