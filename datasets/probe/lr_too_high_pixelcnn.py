"""PixelCNN (masked-convolution autoregressive image model) trained with Adam at lr 0.1.

Mechanism. A PixelCNN (van den Oord et al. 2016) over 8x8 images with 4 intensity levels: a
7x7 type-A masked convolution (a pixel cannot see itself or later pixels), residual blocks of
type-B masked convolutions with ELU (as PixelCNN++), and 1x1 output convolutions giving a
4-way softmax per pixel, trained by per-pixel cross-entropy. The images are simple structured
scenes (bars of one level on a background) so a correct run learns them quickly.

What fails. PixelCNN / PixelCNN++ are trained with Adam at lr ~1e-3; this run gives Adam
lr 0.1, the value of the SGD recipe it was ported from. Adam moves every weight by ~lr per step
whatever the gradient scale, so from the first update the update/weight ratios are ~1 instead
of ~1e-3: no normalisation layer absorbs it, the residual stream and the logits grow by orders
of magnitude, the per-pixel cross-entropy jumps from ln 4 = 1.39 to ~6-160 within a few steps,
and afterwards the over-driven ELU units and logits keep the model at or above chance level
(~1.4-2.8) for the rest of the run, while the same run at a sane lr reaches ~0.2.

ORIGIN = None: all layers overshoot together from the first steps; the failure is the global
step size, not one layer.

fixed=True: the same model, data and Adam with lr 3e-3.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "PixelCNN / PixelCNN++ (van den Oord et al. 2016; Salimans et al. 2017), Adam lr ~1e-3 in "
    "the papers; 'PixelCNN loss explodes / never decreases, lower the learning rate' reports"
)


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type: str, cin: int, cout: int, k: int):
        super().__init__(cin, cout, k, padding=k // 2)
        mask = torch.ones_like(self.weight)
        c = k // 2
        mask[:, :, c, c + (mask_type == "B"):] = 0
        mask[:, :, c + 1:, :] = 0
        self.register_buffer("mask", mask)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class ResidualBlock(nn.Module):
    def __init__(self, ch: int):
        super().__init__()
        self.act1 = nn.ELU()
        self.conv1 = MaskedConv2d("B", ch, ch // 2, 1)
        self.act2 = nn.ELU()
        self.conv2 = MaskedConv2d("B", ch // 2, ch // 2, 3)
        self.act3 = nn.ELU()
        self.conv3 = MaskedConv2d("B", ch // 2, ch, 1)

    def forward(self, x):
        return x + self.conv3(self.act3(self.conv2(self.act2(self.conv1(self.act1(x))))))


class PixelCNN(nn.Module):
    def __init__(self, levels: int, ch: int, n_blocks: int):
        super().__init__()
        self.conv_in = MaskedConv2d("A", 1, ch, 7)
        self.blocks = nn.Sequential(*[ResidualBlock(ch) for _ in range(n_blocks)])
        self.out_act1 = nn.ELU()
        self.out1 = MaskedConv2d("B", ch, ch, 1)
        self.out_act2 = nn.ELU()
        self.out2 = MaskedConv2d("B", ch, levels, 1)

    def forward(self, x):
        h = self.blocks(self.conv_in(x))
        return self.out2(self.out_act2(self.out1(self.out_act1(h))))


def pixel_nll(logits, target):
    return F.cross_entropy(logits, target)


def _scenes(g, n, size, levels):
    img = torch.zeros(n, size, size, dtype=torch.long)
    for i in range(n):
        bg = int(torch.randint(0, levels, (1,), generator=g))
        img[i] = bg
        for _ in range(int(torch.randint(1, 3, (1,), generator=g))):
            lvl = int(torch.randint(0, levels, (1,), generator=g))
            a = int(torch.randint(0, size - 2, (1,), generator=g))
            w = int(torch.randint(1, 4, (1,), generator=g))
            if bool(torch.rand(1, generator=g) < 0.5):
                img[i, a:a + w, :] = lvl
            else:
                img[i, :, a:a + w] = lvl
    return img


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(600 + seed)
    levels, size, batch, steps = 4, 8, 16, 120
    batches = []
    for _ in range(steps):
        img = _scenes(g, batch, size, levels)
        x = (img.float() / (levels - 1) * 2 - 1).unsqueeze(1)  # inputs in [-1, 1]
        batches.append((x, img))

    torch.manual_seed(seed)
    model = PixelCNN(levels, ch=32 + 8 * seed, n_blocks=3)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else 0.1)
    return dict(
        model=model,
        optimizer=optimizer,
        loss_fn=pixel_nll,
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
