"""ConvNeXt with a hand-written channels-first LayerNorm whose eps sits outside the sqrt.

Architecture: a small ConvNeXt (Liu et al. 2022): patchify stem (4x4 stride-4 conv, no bias since
a norm follows, then a channels-first LayerNorm), ConvNeXt blocks (7x7 depthwise conv ->
channels-last LayerNorm -> Linear 4x expansion -> GELU -> Linear -> layer scale -> residual), a
LayerNorm + 2x2 stride-2 conv downsampling layer, a second stage, global average pooling,
LayerNorm and a linear head; AdamW and cross-entropy on a synthetic 6-class image task
(oriented, coloured gratings on noise; normalised per channel).

Mechanism: the channels-first LayerNorm is copied from the ConvNeXt repo but "simplified" to
    x = (x - u) / (s.sqrt() + eps)      with s = (x - u).pow(2).mean(1)
instead of the official `(x - u) / torch.sqrt(s + eps)`.  The forward is harmless (0 / eps),
but the backward of sqrt at s = 0 is inf, and inf * 0 = NaN.  The variance over channels is
exactly 0 wherever the stem sees an all-zero 4x4 patch: images are batched DETR-style, each
normalised image zero-padded at collate time to the largest size in the batch.  Batches are
grouped by aspect ratio (as Detectron2's AspectRatioGroupedDataset does), so the run is calm:
every batch is all landscape or all portrait and has no padding.  The first batch that mixes a
portrait image into landscape ones (the leftover batch at the end of an epoch, at a
seed-dependent step) has a zero-padded right half for that image; the bias-free stem maps it to
exactly zero vectors, the stem LayerNorm's backward returns NaN, the NaN flows into the stem
conv's gradient and AdamW writes NaN into the weights: the next loss is NaN.

ORIGIN: `stem.1`, the stem's hand-written LayerNorm2d that holds the sqrt (later norm layers see
the learned LayerNorm bias at padded positions, never a zero variance).

fixed=True: the LayerNorm2d uses the official form, eps inside the sqrt:
`(x - u) / torch.sqrt(s + eps)`; data, padding, model and optimizer are unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "stem.1"
SOURCE = ("facebookresearch/ConvNeXt models/convnext.py channels_first LayerNorm rewritten as "
          "(x-u)/(sqrt(s)+eps); sqrt(0) backward on zero-padded (DETR-style collate) regions")


class LayerNorm2d(nn.Module):
    """Channels-first LayerNorm, as in the ConvNeXt repo (data_format='channels_first')."""

    def __init__(self, C, safe, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))
        self.bias = nn.Parameter(torch.zeros(C))
        self.eps, self.safe = eps, safe

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        if self.safe:
            x = (x - u) / torch.sqrt(s + self.eps)
        else:
            x = (x - u) / (s.sqrt() + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class Block(nn.Module):
    def __init__(self, dim, ls_init=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(ls_init * torch.ones(dim))

    def forward(self, x):
        h = self.dwconv(x).permute(0, 2, 3, 1)
        h = self.pwconv2(self.act(self.pwconv1(self.norm(h))))
        return x + (self.gamma * h).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, dims, depths, n_classes, safe):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], 4, stride=4, bias=False),
                                  LayerNorm2d(dims[0], safe))
        self.stages = nn.ModuleList()
        self.downsample = nn.ModuleList()
        for i, (d, n) in enumerate(zip(dims, depths)):
            if i > 0:
                self.downsample.append(nn.Sequential(LayerNorm2d(dims[i - 1], safe),
                                                     nn.Conv2d(dims[i - 1], d, 2, stride=2)))
            self.stages.append(nn.Sequential(*[Block(d) for _ in range(n)]))
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], n_classes)
        for m in self.modules():                              # ConvNeXt _init_weights
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stem(x)
        for i, stage in enumerate(self.stages):
            if i > 0:
                x = self.downsample[i - 1](x)
            x = stage(x)
        return self.head(self.norm(x.mean((2, 3))))


MEAN = torch.tensor([0.45, 0.45, 0.45])[:, None, None]
STD = torch.tensor([0.25, 0.25, 0.25])[:, None, None]


def _image(g, label, n_classes, h, w):
    theta = math.pi * label / n_classes + 0.15 * (torch.rand((), generator=g) - 0.5)
    freq = 0.35 + 0.1 * torch.rand((), generator=g)
    phase = 2 * math.pi * torch.rand((), generator=g)
    yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                            indexing="ij")
    grating = torch.sin(freq * (xx * math.cos(theta) + yy * math.sin(theta)) + phase)
    colour = torch.tensor([[1.0, 0.4, 0.2], [0.2, 1.0, 0.4], [0.4, 0.2, 1.0]])[label % 3][:, None, None]
    img = 0.45 + 0.25 * colour * grating + 0.12 * torch.randn(3, h, w, generator=g)
    return (img.clamp(0, 1) - MEAN) / STD                     # ToTensor + Normalize


def _collate(imgs):
    """DETR-style: zero-pad every (normalised) image to the batch's max H and W."""
    H = max(i.shape[1] for i in imgs)
    W = max(i.shape[2] for i in imgs)
    out = torch.zeros(len(imgs), 3, H, W)
    for k, im in enumerate(imgs):
        out[k, :, :im.shape[1], :im.shape[2]] = im
    return out


def _make_batches(g, steps, bs, n_classes, first_mixed):
    batches = []
    for step in range(steps):
        labels = torch.randint(0, n_classes, (bs,), generator=g)
        portrait = torch.rand((), generator=g) < 0.3            # aspect-ratio grouped batch
        sizes = [(32, 16) if portrait else (32, 32)] * bs
        if step == first_mixed or (step > first_mixed and torch.rand((), generator=g) < 0.1):
            sizes[int(torch.randint(0, bs, (), generator=g))] = (32, 16)   # leftover mixed batch
            sizes[0] = (32, 32)
        imgs = [_image(g, int(labels[k]), n_classes, *sizes[k]) for k in range(bs)]
        batches.append((_collate(imgs), labels))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    dims = [(24, 48), (16, 32), (24, 48)][seed % 3]
    depths = [(1, 1), (2, 1), (1, 2)][seed % 3]
    first_mixed = (25, 40, 55)[seed % 3]
    steps = first_mixed + 40
    n_classes = 6
    model = ConvNeXt(dims, depths, n_classes, safe=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=(2e-3, 3e-3, 2e-3)[seed % 3], weight_decay=0.05)
    batches = _make_batches(g, steps, 16, n_classes, first_mixed)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
