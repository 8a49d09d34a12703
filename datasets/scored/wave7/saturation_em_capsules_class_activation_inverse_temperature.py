"""Capsule-like classifier with EM routing (Matrix Capsules with EM routing, simplified to 4-d
pose vectors): a conv stem, a primary-capsule conv that emits pose vectors and sigmoid
activations, and a class-capsule layer whose per-type transformation matrices produce votes that
are routed with three EM iterations. Each class capsule's activation is sigmoid(lambda * (beta_a
- sum_h cost_h)) and the spread loss acts on those activations. The cost is summed over all 128
input capsules, so it is in the hundreds; with the inverse temperature lambda = 1 taken
literally from the paper's description, every class activation is driven to exactly 0 or 1 at
step 0. The sigmoid's gradient is then zero, the spread loss sits at its constant value and
nothing upstream receives a useful gradient: a silent stall, no NaN.
Fixed: lambda = 0.01 (the value reimplementations settle on), i.e. smaller pre-activations of
the class-capsule sigmoid; everything else is identical."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "class_caps"
SOURCE = ("Hinton, Sabour & Frosst 2018 'Matrix capsules with EM routing'; reimplementations "
          "(e.g. Matrix-Capsules-EM-Tensorflow / -PyTorch) report class activations stuck at 0/1 "
          "and a flat spread loss unless the inverse temperature is scaled down to ~1e-2")

N_CLASSES = 4
POSE = 4


class PrimaryCaps(nn.Module):
    def __init__(self, cin, types):
        super().__init__()
        self.types = types
        self.pose = nn.Conv2d(cin, types * POSE, 3, 2, 1)
        self.act = nn.Conv2d(cin, types, 3, 2, 1)

    def forward(self, x):
        b = x.shape[0]
        p = self.pose(x)  # (B, T*P, H, W)
        h, w = p.shape[-2:]
        p = p.view(b, self.types, POSE, h * w).permute(0, 3, 1, 2).reshape(b, h * w * self.types, POSE)
        a = torch.sigmoid(self.act(x)).view(b, self.types, h * w).permute(0, 2, 1).reshape(b, -1)
        return p, a


class ClassCapsEM(nn.Module):
    def __init__(self, types, n_out, inv_temp, iters=3):
        super().__init__()
        self.types, self.n_out, self.inv_temp, self.iters = types, n_out, inv_temp, iters
        self.W = nn.Parameter(torch.randn(types, n_out, POSE, POSE) * 0.5)
        self.beta_u = nn.Parameter(torch.zeros(n_out))
        self.beta_a = nn.Parameter(torch.zeros(n_out))

    def forward(self, pose, a):
        b, n, _ = pose.shape
        W = self.W.repeat(n // self.types, 1, 1, 1)  # (N, C, P, P), type-major per position
        votes = torch.einsum("bnp,ncpq->bncq", pose, W)  # (B, N, C, P)
        R = torch.full((b, n, self.n_out), 1.0 / self.n_out)
        eps = 1e-6
        for it in range(self.iters):
            r = R * a[..., None]
            rs = r.sum(1, keepdim=True) + eps  # (B, 1, C)
            mu = (r[..., None] * votes).sum(1, keepdim=True) / rs[..., None]
            var = (r[..., None] * (votes - mu) ** 2).sum(1, keepdim=True) / rs[..., None] + eps
            cost = ((self.beta_u[None, None, :, None] + 0.5 * var.log()) * rs[..., None]).sum(-1)  # (B,1,C)
            a_out = torch.sigmoid(self.inv_temp * (self.beta_a - cost.squeeze(1)))  # (B, C)
            if it < self.iters - 1:
                logp = -((votes - mu) ** 2 / (2 * var)).sum(-1) - 0.5 * var.log().sum(-1)
                R = torch.softmax(logp + torch.log(a_out[:, None, :] + eps), dim=-1).detach()
        return a_out


class EMCapsNet(nn.Module):
    def __init__(self, inv_temp):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 5, 2, 2), nn.ReLU())
        self.primary = PrimaryCaps(16, 8)
        self.class_caps = ClassCapsEM(8, N_CLASSES, inv_temp)

    def forward(self, x):
        pose, a = self.primary(self.stem(x))
        return self.class_caps(pose, a)


def spread_loss(a, y, m=0.5):
    at = a.gather(1, y[:, None])
    l = F.relu(m - (at - a)) ** 2
    l = l.masked_fill(F.one_hot(y, a.shape[1]).bool(), 0.0)
    return l.sum(1).mean()


def _make_data(g, n):
    imgs = 0.1 * torch.randn(n, 1, 16, 16, generator=g)
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    for i in range(n):
        r, c = [int(v) for v in torch.randint(3, 13, (2,), generator=g)]
        k = int(y[i])
        if k == 0:
            imgs[i, 0, r, max(0, c - 3):c + 4] += 1.0
        elif k == 1:
            imgs[i, 0, max(0, r - 3):r + 4, c] += 1.0
        elif k == 2:
            for d in range(-3, 4):
                if 0 <= r + d < 16 and 0 <= c + d < 16:
                    imgs[i, 0, r + d, c + d] += 1.0
        else:
            imgs[i, 0, max(0, r - 2):r + 3, max(0, c - 2):c + 3] += 0.6
    return imgs, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    x, y = _make_data(g, 512)
    steps, bs = 120, 32
    batches = [(x[(s * bs) % 512:(s * bs) % 512 + bs], y[(s * bs) % 512:(s * bs) % 512 + bs]) for s in range(steps)]
    model = EMCapsNet(inv_temp=0.01 if fixed else 1.0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=spread_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
