"""ClimaX-style ViT weather emulator (Nguyen et al. 2023) trained with SGD+momentum at an lr inflated by the linear scaling rule.

Mechanism: a small pre-LN transformer over lat-lon patches predicting the next state. The user
switches to SGD (momentum 0.9) and applies the "linear scaling rule" from a reference batch of 8
to a planned global batch of 4096 GPUs-worth, ending with lr 2-3. The first updates are far larger
than the weights (update/weight ratio >> 1e-3): the patch-embedding and attention weights overshoot,
activations and gradients grow step after step with momentum, and the loss becomes inf/NaN after a
few steps. The fixed run uses lr 0.05.

ORIGIN: None (global optimiser setting; every block overshoots).
Fix: lr 0.05 (same SGD+momentum, same everything else).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "ClimaX (Nguyen et al. 2023) ViT for weather/climate; Goyal et al. 2017 linear scaling rule misapplied (no warmup) leading to divergence"


class ClimaXLite(nn.Module):
    def __init__(self, vars_, H, W, p, d, depth, heads):
        super().__init__()
        self.p, self.H, self.W, self.v = p, H, W, vars_
        self.n = (H // p) * (W // p)
        self.embed = nn.Linear(vars_ * p * p, d)
        self.pos = nn.Parameter(torch.randn(1, self.n, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vars_ * p * p)

    def forward(self, x):
        b, v, H, W, p = x.shape[0], self.v, self.H, self.W, self.p
        t = x.reshape(b, v, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, self.n, v * p * p)
        z = self.head(self.norm(self.blocks(self.embed(t) + self.pos)))
        z = z.reshape(b, H // p, W // p, v, p, p).permute(0, 3, 1, 4, 2, 5).reshape(b, v, H, W)
        return z


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 32][seed % 3]
    depth = [2, 2, 3][seed % 3]
    H, W = [(16, 32), (16, 16), (8, 32)][seed % 3]
    bs = [8, 8, 12][seed % 3]
    steps = [60, 50, 60][seed % 3]
    lr = 0.05 if fixed else [2.5, 2.0, 3.0][seed % 3]
    batches = []
    for _ in range(steps):
        x = torch.nn.functional.avg_pool2d(torch.randn(bs, 3, H, W, generator=g), 5, 1, 2) * 2.5
        y = torch.stack([torch.roll(x[:, 0], 1, -1), 0.5 * x[:, 1] + 0.5 * x[:, 0], torch.roll(x[:, 2], -1, -2)], 1)
        batches.append((x, y))
    model = ClimaXLite(3, H, W, 4, d, depth, 4)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
