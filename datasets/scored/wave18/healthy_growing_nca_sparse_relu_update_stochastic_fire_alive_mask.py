"""Growing neural cellular automaton (Mordvintsev et al., Distill 2020) in PyTorch:
healthy run that looks alarming.

Setup: each cell perceives its 3x3 neighbourhood through fixed identity/Sobel filters, a
per-cell MLP (1x1 conv -> ReLU -> 1x1 conv, last layer zero-initialised, as in the
paper) proposes a residual update, a stochastic fire mask (rate 0.5) and the alive mask
(max-pooled alpha > 0.1) are applied, and the rule is iterated from a single seed cell
for a random number of steps per batch (the paper samples 64-96; here a smaller range);
the loss is the RGBA MSE to the target image at the end of the rollout.

Why it looks bad but is fine: most cells are empty for most of the rollout, so the
majority of hidden ReLU activations are exactly zero and the zero-initialised output
conv gives an exactly zero update at step 0; the alive mask writes exact zeros into the
state, the fire mask makes the forward pass stochastic and the random rollout length
makes the loss jump from batch to batch.  The pattern nevertheless grows and the loss
falls steadily with Adam at the paper's lr.

ORIGIN is None (healthy).  No fix is needed; fixed=True builds the same run.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mordvintsev et al., 'Growing Neural Cellular Automata', Distill 2020 (experiment 1: "
          "grow from a seed, random rollout length, stochastic updates, alive masking)")


class GrowingNCA(nn.Module):
    def __init__(self, channels, hidden, fire_rate, seed):
        super().__init__()
        self.channels = channels
        self.fire_rate = fire_rate
        ident = torch.tensor([[0., 0., 0.], [0., 1., 0.], [0., 0., 0.]])
        sobel = torch.tensor([[-1., 0., 1.], [-2., 0., 2.], [-1., 0., 1.]]) / 8.0
        kernels = torch.stack([ident, sobel, sobel.t()])  # 3,3,3
        self.register_buffer("kernels", kernels.repeat(channels, 1, 1).unsqueeze(1))
        self.update = nn.Sequential(
            nn.Conv2d(3 * channels, hidden, 1),
            nn.ReLU(),
            nn.Conv2d(hidden, channels, 1, bias=False),
        )
        nn.init.zeros_(self.update[2].weight)
        self.gen = torch.Generator().manual_seed(1000 + seed)

    def alive(self, x):
        return F.max_pool2d(x[:, 3:4], 3, stride=1, padding=1) > 0.1

    def step(self, x):
        pre = self.alive(x)
        y = F.conv2d(x, self.kernels, padding=1, groups=self.channels)
        dx = self.update(y)
        fire = (torch.rand(x.shape[0], 1, x.shape[2], x.shape[3], generator=self.gen)
                <= self.fire_rate).to(x.dtype)
        x = x + dx * fire
        post = self.alive(x)
        return x * (pre & post).to(x.dtype)

    def forward(self, seed_state, n_iter):
        x = seed_state
        for _ in range(int(n_iter)):
            x = self.step(x)
        return x[:, :4]


def target_image(size, kind):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size),
                            indexing="ij")
    r = torch.sqrt(xx ** 2 + yy ** 2)
    if kind == 0:    # orange disc with a dark ring
        a = (r < 0.75).float()
        rgb = torch.stack([torch.ones_like(r), 0.6 - 0.4 * (r > 0.5).float(), 0.1 * torch.ones_like(r)])
    elif kind == 1:  # green diamond
        a = ((xx.abs() + yy.abs()) < 0.8).float()
        rgb = torch.stack([0.2 + 0.3 * xx.abs(), 0.8 * torch.ones_like(r), 0.3 + 0.3 * yy])
    else:            # blue disc with a white ring
        a = (r < 0.8).float()
        rgb = torch.stack([0.3 * torch.ones_like(r), 0.5 + 0.5 * yy.clamp(0, 1), torch.ones_like(r)])
    rgb = rgb.clamp(0, 1) * a  # premultiplied alpha
    return torch.cat([rgb, a.unsqueeze(0)])


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    cfg = [
        dict(size=16, channels=12, hidden=64, iters=(14, 26), bs=4, steps=60, lr=2e-3),
        dict(size=14, channels=10, hidden=48, iters=(12, 22), bs=6, steps=70, lr=3e-3),
        dict(size=18, channels=12, hidden=96, iters=(16, 30), bs=3, steps=50, lr=2e-3),
    ][seed % 3]
    model = GrowingNCA(cfg["channels"], cfg["hidden"], 0.5, seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    s = cfg["size"]
    seed_state = torch.zeros(cfg["bs"], cfg["channels"], s, s)
    seed_state[:, 3:, s // 2, s // 2] = 1.0
    tgt = target_image(s, seed % 3).unsqueeze(0).repeat(cfg["bs"], 1, 1, 1)
    g = torch.Generator().manual_seed(seed)
    lo, hi = cfg["iters"]
    batches = [((seed_state.clone(), int(torch.randint(lo, hi + 1, (1,), generator=g))), tgt.clone())
               for _ in range(cfg["steps"])]

    def loss_fn(out, target):
        return F.mse_loss(out, target)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
