"""Gated PixelCNN (masked convolutions, tanh*sigmoid gated units, no residuals, no norm) on binary
stripe images, trained with SGD+momentum and per-pixel BCE.

Mechanism: the user copied a "weights_init" that draws every conv weight from N(0, 0.01) and zeroes
biases. With fan-in 9*C and gated units (tanh(a)*sigmoid(b) ~ a/2 near zero) each layer multiplies the
activation scale by ~0.01*sqrt(9C)/2 << 1, so the signal (and the backward gradient) shrinks
geometrically with depth from step 0. Only the output bias learns: it fits the 50% marginal and the
loss sits at ln 2. ORIGIN is the first masked conv (mask A), where the shrinking starts.
Fix: kaiming-normal (fan_in) conv init, biases still zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "conv_in"
SOURCE = "PixelCNN/Gated PixelCNN re-implementations using DCGAN-style weights_init normal(0, 0.01) without residual stacks; vanishing signal reported as loss stuck at ln2 on binarised images"


class MaskedConv2d(nn.Conv2d):
    def __init__(self, cin, cout, k, mask_type):
        super().__init__(cin, cout, k, padding=k // 2)
        m = torch.ones_like(self.weight)
        c = k // 2
        m[:, :, c, c + (mask_type == "B"):] = 0
        m[:, :, c + 1:] = 0
        self.register_buffer("mask", m)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class GatedLayer(nn.Module):
    def __init__(self, c, mask_type):
        super().__init__()
        self.conv = MaskedConv2d(c, 2 * c, 3, mask_type)

    def forward(self, x):
        a, b = self.conv(x).chunk(2, 1)
        return torch.tanh(a) * torch.sigmoid(b)


class GatedPixelCNN(nn.Module):
    def __init__(self, c, n_layers):
        super().__init__()
        self.conv_in = MaskedConv2d(1, 2 * c, 5, "A")
        self.layers = nn.ModuleList([GatedLayer(c, "B") for _ in range(n_layers)])
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        a, b = self.conv_in(x).chunk(2, 1)
        h = torch.tanh(a) * torch.sigmoid(b)
        for l in self.layers:
            h = l(h)
        return self.out(h)


def _stripes(g, n, s):
    x = torch.zeros(n, 1, s, s)
    rows = (torch.rand(n, 1, s, 1, generator=g) < 0.5).float()
    return x + rows.expand(n, 1, s, s)


def build(seed, fixed=False):
    cfg = [dict(c=16, L=3, lr=0.08, bs=20), dict(c=12, L=2, lr=0.06, bs=24), dict(c=20, L=3, lr=0.05, bs=16)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GatedPixelCNN(cfg["c"], cfg["L"])
    def weights_init(m):
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    model.apply(weights_init)
    steps = 120
    batches = []
    for _ in range(steps):
        x = _stripes(g, cfg["bs"], 8)
        batches.append((x, x))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    loss_fn = lambda out, y: F.binary_cross_entropy_with_logits(out, y)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
