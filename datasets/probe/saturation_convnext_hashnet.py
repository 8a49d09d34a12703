"""Deep supervised hashing (HashNet) head on a small ConvNeXt backbone, tanh run at a large beta.

Mechanism. Deep hashing learns K-bit binary codes for image retrieval: a ConvNeXt-style
backbone (patchify stem, depthwise-conv / LayerNorm / inverted-MLP blocks with layer scale,
global pooling, LayerNorm), a linear hash layer, and ``tanh(beta * z)`` as a smooth stand-in
for ``sign(z)``, trained with SGD + momentum (as HashNet) on HashNet's class-balanced pairwise
likelihood of the code inner products of every pair in the batch (same class = similar).
HashNet (Cao et al., ICCV 2017) explains that learning through ``sign`` is ill-posed (zero
gradient almost everywhere, huge at 0) and therefore starts at beta = 1 and raises beta slowly
("continuation"). This run takes the tempting shortcut of a fixed steep beta (100) "to get
binary codes directly".

What fails. The hash pre-activations are O(0.1-1) after the head LayerNorm, so beta * z is
O(10-100): ~95% of the tanh units sit at +-1 from the first step and pass no gradient
(``beta * (1 - tanh^2)`` ~ 0), while the few units that happen to sit near 0 pass gradients
amplified by beta = 100. Those bursts kick the hash layer and backbone so that within ~10 steps
every unit is saturated and the codes collapse towards a few identical +-1 patterns; from then
on the gradient through the tanh is ~0, the pairwise loss stays stuck at ~4.5-5 (above its
starting ~2-3.3) and nothing recovers. Inputs are standardised and the init is PyTorch's
default: the steep non-linearity is the problem.

ORIGIN = "hash_act": the Tanh module whose units saturate; everything below it is well-scaled
and only receives bursts of amplified gradient, then none, because of it.

fixed=True: the same model, data and optimizer with beta = 1 (HashNet's starting point, units
in tanh's linear range); nothing else changes.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "hash_act"
SOURCE = (
    "HashNet: Deep Learning to Hash by Continuation (Cao et al., ICCV 2017): sign/steep tanh "
    "gives vanishing gradients, so beta starts at 1; a fixed steep beta saturates the codes"
)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 5, padding=2, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 0.1))

    def forward(self, x):
        h = self.dwconv(x).permute(0, 2, 3, 1)
        h = self.pwconv2(self.act(self.pwconv1(self.norm(h))))
        return x + (self.gamma * h).permute(0, 3, 1, 2)


class ScaledTanh(nn.Tanh):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return super().forward(self.beta * x)


class ConvNeXtHashNet(nn.Module):
    def __init__(self, dim: int, depth: int, bits: int, beta: float):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 2, stride=2), LayerNorm2d(dim))
        self.blocks = nn.Sequential(*[ConvNeXtBlock(dim) for _ in range(depth)])
        self.head_norm = nn.LayerNorm(dim)
        self.hash_fc = nn.Linear(dim, bits)
        self.hash_act = ScaledTanh(beta)

    def forward(self, x):
        h = self.blocks(self.stem(x)).mean(dim=(2, 3))
        return self.hash_act(self.hash_fc(self.head_norm(h)))


def hashnet_pair_loss(codes, labels):
    """HashNet weighted pairwise likelihood over all pairs of the batch."""
    bits = codes.shape[1]
    alpha = 10.0 / bits
    ip = alpha * codes @ codes.t()
    sim = (labels[:, None] == labels[None, :]).float()
    n_pos = sim.sum().clamp_min(1.0)
    n_neg = (1 - sim).sum().clamp_min(1.0)
    w = sim * (sim.numel() / n_pos) + (1 - sim) * (sim.numel() / n_neg)  # class-balance weights
    nll = F.softplus(ip) - sim * ip
    return (w * nll).mean() / 2


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(300 + seed)
    n_classes = 8 + 2 * seed
    batch, steps = 32, 120
    protos = torch.randn(n_classes, 3, 8, 8, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_classes, (batch,), generator=g)
        x = protos[y] + 0.8 * torch.randn(batch, 3, 8, 8, generator=g)
        batches.append((x / x.std(), y))

    torch.manual_seed(seed)
    model = ConvNeXtHashNet(dim=24, depth=2, bits=16, beta=1.0 if fixed else 100.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    return dict(
        model=model,
        optimizer=optimizer,
        loss_fn=hashnet_pair_loss,
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
