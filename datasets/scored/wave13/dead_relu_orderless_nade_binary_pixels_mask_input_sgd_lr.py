"""Orderless NADE (Uria, Murray & Larochelle 2014) on binarised 8x8 glyphs: input is the
masked image concatenated with the mask, a ReLU hidden layer, sigmoid logits for every
pixel, loss = BCE on the *unobserved* pixels (orderless NADE training objective), SGD with
momentum.  Output biases are initialised to the pixel log-odds, as in the reference code.

Mechanism: the inputs are binary and non-negative (the pixels and the mask bits are 0/1, half
the input is the all-positive mask).  The gradient of every first-layer weight of a unit is
(unit's backprop signal) x (input), so within one unit all weights on "on" inputs move in the
same direction.  With the user's lr (0.5-0.8, copied from a logistic-regression baseline on
the same pixels) the first few momentum-SGD steps shift each pre-activation by
lr * delta * sum(x_j^2) ~ tens, far below zero for every input: >90% of the hidden ReLUs
die within ~10 steps, the output layer sees (almost) constant inputs, and the model is stuck
at (or above) the marginal-pixel NLL it started from.

ORIGIN: ``hidden.1`` -- the hidden ReLU (after the layer that receives the positive inputs),
whose units die.

Fix: lr=0.02 (everything else identical).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hidden.1"
SOURCE = ("Orderless NADE / DeepNADE (Uria et al. 2014) with ReLU hidden units on binarised MNIST; "
          "dead-ReLU reports when SGD lr from a logistic-regression baseline is reused on "
          "uncentred 0/1 inputs")


class OrderlessNADE(nn.Module):
    def __init__(self, d, width, pixel_logodds):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(2 * d, width), nn.ReLU())
        self.out = nn.Linear(width, d)
        with torch.no_grad():
            self.out.bias.copy_(pixel_logodds)

    def forward(self, x, mask):
        return self.out(self.hidden(torch.cat([x * mask, mask], 1)))


def orderless_nll(logits, target):
    x, mask = target
    d = x.shape[1]
    bce = F.binary_cross_entropy_with_logits(logits, x, reduction="none")
    unobs = 1 - mask
    # unbiased orderless estimator: D / (D - d_obs) * sum over unobserved pixels
    scale = d / unobs.sum(1).clamp_min(1)
    return (scale * (bce * unobs).sum(1)).mean()


def _glyphs(g, n, n_proto):
    protos = (torch.rand(n_proto, 64, generator=g) < 0.35).float()
    # smooth prototypes a bit so they look like strokes
    img = protos.view(n_proto, 1, 8, 8)
    img = (F.avg_pool2d(img, 3, 1, 1) > 0.3).float().view(n_proto, 64)
    idx = torch.randint(0, n_proto, (n,), generator=g)
    flip = (torch.rand(n, 64, generator=g) < 0.05).float()
    return (img[idx] + flip) % 2


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=128, bs=64, lr=0.5, steps=120, protos=12),
           dict(width=96, bs=48, lr=0.8, steps=150, protos=8),
           dict(width=192, bs=100, lr=0.5, steps=100, protos=16)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    n = cfg["bs"] * cfg["steps"]
    x = _glyphs(g, n, cfg["protos"])
    p = x.mean(0).clamp(0.02, 0.98)
    model = OrderlessNADE(64, cfg["width"], torch.log(p / (1 - p)))
    batches = []
    for i in range(cfg["steps"]):
        xb = x[i * cfg["bs"]:(i + 1) * cfg["bs"]]
        # random ordering: observe the first k pixels of a random permutation
        k = torch.randint(0, 64, (xb.shape[0], 1), generator=g)
        ranks = torch.argsort(torch.rand(xb.shape[0], 64, generator=g), 1)
        mask = (ranks < k).float()
        batches.append(((xb, mask), (xb, mask)))
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=orderless_nll, batches=batches,
                steps=cfg["steps"])
