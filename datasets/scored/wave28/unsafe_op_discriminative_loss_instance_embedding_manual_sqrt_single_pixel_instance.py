"""Proposal-free instance segmentation with the discriminative loss (De Brabandere et al. 2017):
a small FCN maps every pixel to an embedding; a variance (pull) term pulls the pixels of each
instance within delta_v of their mean, a distance (push) term pushes instance means 2*delta_d
apart, plus a small regulariser on the means.

Mechanism: the Euclidean norms in the pull term are written by hand as
`((mu - x) ** 2).sum(-1).sqrt()`.  That is fine while every instance has at least two pixels.
Random crops (an object cut at the crop border) and occlusion by overlapping instances
occasionally leave an instance with a single visible pixel; its mean is
exactly that pixel's embedding, the difference is exactly 0, and sqrt(0) has an infinite
derivative.  The hinge max(0, d - delta_v) is inactive there and sends back a zero gradient,
and 0 * inf = NaN: the gradients of the FCN become NaN in that step, Adam writes NaN into every
weight, and from the next step on the loss is NaN.  Until that batch the run is calm.

ORIGIN: None.  The non-finite value is produced inside the loss (the hand-written norm's
backward), not by a module of the model.

Fix: an epsilon inside the square root, `(... + 1e-8).sqrt()` (the usual safe norm); nothing
else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("De Brabandere, Neven & Van Gool, 'Semantic instance segmentation with a discriminative "
          "loss function' (2017); hand-written norm sqrt(sum(x^2)) giving NaN gradients at zero "
          "distance (PyTorch issue 'torch.norm / sqrt gradient is nan at 0', single-pixel "
          "instances)")


class EmbedFCN(nn.Module):
    def __init__(self, width, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(width, width, 3, padding=2, dilation=2), nn.ReLU(),
                                 nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(width, dim, 1))

    def forward(self, img):
        return self.net(img)


def make_discriminative_loss(safe, delta_v=0.5, delta_d=1.5):
    def norm(v):
        s = (v ** 2).sum(-1)
        return (s + 1e-8).sqrt() if safe else s.sqrt()

    def loss_fn(emb, labels):
        total = 0.0
        for b in range(emb.shape[0]):
            e = emb[b].flatten(1).t()                        # (HW, D)
            lab = labels[b].flatten()
            ids = [int(i) for i in lab.unique() if i > 0]
            mus, l_var = [], 0.0
            for i in ids:
                x = e[lab == i]
                mu = x.mean(0)
                mus.append(mu)
                l_var = l_var + F.relu(norm(mu[None] - x) - delta_v).pow(2).mean()
            mus = torch.stack(mus)
            l_var = l_var / len(ids)
            l_dist = 0.0
            if len(ids) > 1:
                diff = mus[:, None] - mus[None]
                off = ~torch.eye(len(ids), dtype=torch.bool)
                l_dist = F.relu(2 * delta_d - norm(diff[off])).pow(2).mean()
            l_reg = norm(mus).mean()
            total = total + l_var + l_dist + 0.001 * l_reg
        return total / emb.shape[0]

    return loss_fn


def _batch(g, n, size, single_pixel):
    imgs = 0.1 * torch.randn(n, 1, size, size, generator=g)
    labels = torch.zeros(n, size, size, dtype=torch.long)
    for b in range(n):
        k = int(torch.randint(2, 5, (1,), generator=g))
        for i in range(1, k + 1):
            h, w = (int(v) for v in torch.randint(3, 7, (2,), generator=g))
            r = int(torch.randint(0, size - h + 1, (1,), generator=g))
            c = int(torch.randint(0, size - w + 1, (1,), generator=g))
            labels[b, r:r + h, c:c + w] = i
            tex = torch.sin(torch.arange(w, dtype=torch.float32) * (0.5 + i))[None]
            imgs[b, 0, r:r + h, c:c + w] = 0.4 * i + 0.3 * tex
        if single_pixel and b == 0:
            # an instance cut by the crop: only its corner pixel remains in view
            labels[b, size - 1, size - 1] = k + 1
            imgs[b, 0, size - 1, size - 1] = 0.4 * (k + 1)
    return imgs, labels


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [16, 24, 32][seed % 3]
    dim = [4, 6, 8][seed % 3]
    batch = [4, 6, 3][seed % 3]
    lr = [2e-3, 1.5e-3, 3e-3][seed % 3]
    bad_step = [37, 58, 74][seed % 3]
    steps, size = 100, 16
    model = EmbedFCN(width, dim)
    batches = [_batch(g, batch, size, t == bad_step) for t in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": make_discriminative_loss(safe=fixed),
            "batches": batches, "steps": steps}
