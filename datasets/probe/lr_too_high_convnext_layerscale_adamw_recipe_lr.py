"""Tiny ConvNeXt (patchify stem, depthwise 7x7 conv, channels-last LayerNorm, 4x GELU MLP,
layer scale, stochastic depth) trained with AdamW. The learning rate was taken from a
large-batch recipe and multiplied up by the linear-scaling rule in the wrong direction,
with no warmup (lr ~0.5): every AdamW step moves each weight (std 0.02) by ~lr, update/weight
ratios of order 10 instead of ~1e-3, so the loss jumps far above chance in the first steps
and then sits at chance (ln 10) for the rest of the run.
fixed=True: the same run at lr = 1e-3 (nothing else changes).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Known pattern: ConvNeXt (Liu et al. 2022) recipe of AdamW lr 4e-3 at batch 4096 with "
    "20 warmup epochs; linear lr scaling (Goyal et al. 2017) applied the wrong way round for a "
    "small batch and no warmup, so the loss bounces and then sits at ln(num_classes)"
)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return F.layer_norm(
            x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps
        ).permute(0, 3, 1, 2)


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty(x.shape[0], 1, 1, 1).bernoulli_(1 - self.p)
        return x * keep / (1 - self.p)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, drop_path, ls_init=1e-6):
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(ls_init * torch.ones(dim))
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        y = self.conv_dw(x).permute(0, 2, 3, 1)
        y = self.fc2(self.act(self.fc1(self.norm(y)))) * self.gamma
        return x + self.drop_path(y.permute(0, 3, 1, 2))


class ConvNeXt(nn.Module):
    def __init__(self, dims=(32, 64), depths=(2, 2), classes=10, dpr=0.1):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6))
        rates = torch.linspace(0, dpr, sum(depths)).tolist()
        stages, k = [], 0
        for i, (d, n) in enumerate(zip(dims, depths, strict=True)):
            layers = []
            if i > 0:
                layers += [LayerNorm2d(dims[i - 1], eps=1e-6), nn.Conv2d(dims[i - 1], d, 2, 2)]
            layers += [ConvNeXtBlock(d, rates[k + j]) for j in range(n)]
            k += n
            stages.append(nn.Sequential(*layers))
        self.stages = nn.Sequential(*stages)
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(self.norm(x.mean((2, 3))))


def _make_batch(g, protos, bs):
    y = torch.randint(0, protos.shape[0], (bs,), generator=g)
    x = protos[y]
    sh = torch.randint(-3, 4, (2,), generator=g)
    x = torch.roll(x, shifts=(int(sh[0]), int(sh[1])), dims=(2, 3))
    flip = torch.rand(bs, 1, 1, 1, generator=g) < 0.5
    x = torch.where(flip, x.flip(3), x)
    return x + 0.7 * torch.randn(x.shape, generator=g), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    protos = F.interpolate(
        torch.randn(10, 3, 6, 6, generator=g), size=32, mode="bilinear", align_corners=False
    )
    protos = (protos + protos.flip(3)) / 2**0.5  # flip-invariant class templates
    model = ConvNeXt()
    steps = 150
    batches = [_make_batch(g, protos, 32) for _ in range(steps)]
    base_lr, recipe_batch, batch = 4e-3, 4096, 32
    # linear scaling rule inverted: should shrink lr by batch / recipe_batch, instead grows it
    # (lr ~0.4-0.6)
    lr = 1e-3 if fixed else base_lr * recipe_batch / batch * (0.8 + 0.15 * (seed % 3))
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}], lr=lr
    )
    torch.manual_seed(seed)
    return dict(
        model=model,
        optimizer=opt,
        loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1),
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
