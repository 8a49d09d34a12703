"""Normalisation-free ResNeXt initialised with ``nn.init.normal_(w)`` (std = 1).

Mechanism
---------
A small ResNeXt (bottleneck blocks with grouped 3x3 convolutions, cardinality
4) is used without BatchNorm (small per-device batches, so BN was dropped, as
in Fixup / NF-Net style setups).  A custom ``_init_weights`` loop calls
``nn.init.normal_(m.weight)`` -- whose default std is 1.0, not the
~sqrt(2 / fan_in) ~ 0.1-0.25 that Kaiming init would give.  Every conv and
linear layer therefore multiplies the activation scale by ~sqrt(fan_in / 2)
(4-8x) and every bottleneck block by ~30-50x; with nothing to renormalise, the
activation scale grows geometrically with depth from the first forward pass:
the stem output has std ~3 (vs ~0.8 with Kaiming), the blocks ~60, ~2e3, ~1e5
and the logits O(1e5..1e7).  The initial cross-entropy is astronomically large, the gradients
are equally huge, and the first SGD steps push the weights to inf/NaN.

Fix
---
Kaiming-normal (fan_in, ReLU gain) initialisation for conv/linear weights, and
the last conv of each residual branch scaled down (zero-ish residual init, as
Fixup recommends for norm-free residual nets).  Same model, data, optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "stem"
SOURCE = ("PyTorch forum / StackOverflow reports 'loss is huge then NaN after "
          "custom weight init' caused by nn.init.normal_(m.weight) defaulting to "
          "std=1; He et al. 2015 (Kaiming init) and Zhang et al. 2019 (Fixup) on "
          "geometric activation growth in residual nets without normalisation")


class Bottleneck(nn.Module):
    def __init__(self, ch, width, groups):
        super().__init__()
        self.reduce = nn.Conv2d(ch, width, 1)
        self.grouped = nn.Conv2d(width, width, 3, padding=1, groups=groups)
        self.expand = nn.Conv2d(width, ch, 1)

    def forward(self, x):
        h = F.relu(self.reduce(x))
        h = F.relu(self.grouped(h))
        return F.relu(x + self.expand(h))


class NormFreeResNeXt(nn.Module):
    def __init__(self, ch, width, groups, n_blocks, n_cls):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.blocks = nn.Sequential(*[Bottleneck(ch, width, groups) for _ in range(n_blocks)])
        self.head = nn.Linear(ch, n_cls)

    def forward(self, x):
        h = F.relu(self.stem(x))
        h = F.max_pool2d(h, 2)
        h = self.blocks(h)
        return self.head(h.mean((2, 3)))


def _init_weights(model, fixed):
    for name, m in model.named_modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                if name.endswith("expand"):
                    m.weight.data.mul_(0.1)
            else:
                nn.init.normal_(m.weight)  # bug: default std=1.0
            nn.init.zeros_(m.bias)


def _make_data(g, steps, B, n_cls, size):
    # class = orientation/frequency of a coloured grating + noise
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    angles = torch.linspace(0, 3.1416, n_cls + 1)[:-1]
    colours = torch.rand(n_cls, 3, generator=g) + 0.5
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (B,), generator=g)
        phase = torch.rand(B, 1, 1, generator=g) * 6.28
        a = angles[y].view(B, 1, 1)
        pat = torch.sin(0.9 * (xx * torch.cos(a) + yy * torch.sin(a)) + phase)
        x = colours[y].view(B, 3, 1, 1) * pat.unsqueeze(1)
        x = x + 0.5 * torch.randn(x.shape, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    ch = [32, 32, 48][seed % 3]
    width = [16, 24, 16][seed % 3]
    n_blocks = [3, 3, 4][seed % 3]
    groups = 4
    n_cls = 5
    size = 16
    B = 24
    steps = 120
    lr = [0.02, 0.03, 0.02][seed % 3]

    model = NormFreeResNeXt(ch, width, groups, n_blocks, n_cls)
    _init_weights(model, fixed)
    batches = _make_data(g, steps, B, n_cls, size)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
