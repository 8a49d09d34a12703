"""A small PixelCNN (van den Oord et al. 2016): a 7x7 type-A masked convolution followed by
residual 3x3 type-B masked convolutions and a 1x1 Bernoulli head, trained on binarised 12x12
shapes. The loss is reported the way density-model papers report it, in nats per image (BCE
summed over the 144 pixels, averaged over the batch), so the loss starts near 100 and the
gradients are two orders of magnitude larger than with a per-pixel mean. Adam is scale
invariant, the loss falls steadily to ~25-30 nats/image; the big numbers are not a problem."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("van den Oord et al. 2016 'Pixel Recurrent Neural Networks' (PixelCNN masked convs A/B), "
          "binarised-MNIST NLL reported in nats per image")


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        kh, kw = self.kernel_size
        m = torch.ones_like(self.weight)
        m[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        m[:, :, kh // 2 + 1:] = 0
        self.register_buffer("mask", m)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, self.stride, self.padding)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = MaskedConv2d("B", c, c, 3, padding=1)

    def forward(self, x):
        return x + self.conv(F.relu(x))


class PixelCNN(nn.Module):
    def __init__(self, c=32, n_blocks=4):
        super().__init__()
        self.input_conv = MaskedConv2d("A", 1, c, 7, padding=3)
        self.blocks = nn.Sequential(*[ResBlock(c) for _ in range(n_blocks)])
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        return self.out(F.relu(self.blocks(self.input_conv(x))))


def nats_per_image(logits, x):
    return F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.shape[0]


def _shapes(g, n, size=12):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    out = torch.zeros(n, 1, size, size)
    for i in range(n):
        cx, cy = (2 + (size - 4) * torch.rand(2, generator=g)).tolist()
        r = 2 + 2.5 * torch.rand(1, generator=g).item()
        if torch.rand(1, generator=g).item() < 0.5:
            m = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
        else:
            m = ((xx - cx).abs() <= r) & ((yy - cy).abs() <= r)
        out[i, 0][m] = 1.0
    flip = torch.rand(out.shape, generator=g) < 0.02            # binarisation noise
    return torch.where(flip, 1 - out, out)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    model = PixelCNN()
    data = _shapes(g, 512)
    steps, bs = 150, 32
    batches = []
    for s in range(steps):
        x = data[torch.randint(0, data.shape[0], (bs,), generator=g)]
        batches.append((x, x))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nats_per_image, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
