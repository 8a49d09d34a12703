"""CapsNet (Sabour et al. 2017): Conv1 + ReLU -> PrimaryCaps (conv, squash) ->
DigitCaps with 3 iterations of dynamic routing-by-agreement, trained with the
margin loss on capsule lengths.

Mechanism: the user copied lr=0.05-0.08 from an SGD recipe into
torch.optim.Adam (the paper uses Adam at 1e-3).  Adam moves every parameter by
~lr per step regardless of its gradient scale, so the transformation matrices W
(init scale 0.05) and the conv kernels change by 10-300% of their own size on
each of the first steps (update/weight ratios 1e-1..3 instead of ~1e-3).  The
prediction vectors u_hat grow erratically, routing-by-agreement locks the
coupling coefficients onto a few capsules, the squash non-linearity runs in
its flat region, many Conv1 channels are pushed off, and the loss jumps above
its initial value and never recovers.

ORIGIN: None -- every parameter group overshoots at once; no single module
starts it.

Fix: Adam at the paper's lr=1e-3; architecture, routing and data unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Sabour, Frosst & Hinton 2017 'Dynamic Routing Between Capsules' (Adam 1e-3); "
          "CapsNet-PyTorch re-implementation issues where the margin loss goes up and "
          "accuracy stays at chance after the learning rate is raised")


def squash(s, dim=-1, eps=1e-8):
    n2 = (s * s).sum(dim, keepdim=True)
    return (n2 / (1.0 + n2)) * s / torch.sqrt(n2 + eps)


class CapsNet(nn.Module):
    def __init__(self, img, c1, prim_types, n_cls, prim_dim=8, out_dim=16, iters=3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, c1, 5)
        self.relu1 = nn.ReLU()
        self.primary = nn.Conv2d(c1, prim_types * prim_dim, 5, stride=2)
        side = ((img - 4) - 5) // 2 + 1
        self.n_prim = prim_types * side * side
        self.prim_dim = prim_dim
        self.n_cls, self.out_dim, self.iters = n_cls, out_dim, iters
        self.W = nn.Parameter(0.05 * torch.randn(1, self.n_prim, n_cls, out_dim, prim_dim))

    def forward(self, x):
        h = self.relu1(self.conv1(x))
        p = self.primary(h)                                   # (B, T*D, S, S)
        B = p.shape[0]
        p = p.view(B, -1, self.prim_dim, p.shape[-2], p.shape[-1])
        u = squash(p.permute(0, 1, 3, 4, 2).reshape(B, self.n_prim, self.prim_dim))
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)  # (B, N, C, out)
        b = torch.zeros(B, self.n_prim, self.n_cls, device=x.device)
        for i in range(self.iters):
            c = F.softmax(b, dim=2)
            v = squash((c.unsqueeze(-1) * u_hat).sum(1))          # (B, C, out)
            if i < self.iters - 1:
                b = b + (u_hat * v.unsqueeze(1)).sum(-1)
        return v.norm(dim=-1)                                   # capsule lengths


class MarginLoss(nn.Module):
    def forward(self, lengths, y):
        t = F.one_hot(y, lengths.shape[1]).float()
        l = t * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - t) * F.relu(lengths - 0.1) ** 2
        return l.sum(1).mean()


def _data(g, steps, bsz, img, n_cls):
    protos = (torch.rand(n_cls, 1, img, img, generator=g) < 0.3).float()
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bsz,), generator=g)
        x = protos[y] + 0.2 * torch.randn(bsz, 1, img, img, generator=g)
        batches.append((x.clamp(0, 1), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(img=20, c1=32, prim_types=8, n_cls=5, bsz=32, lr=0.05, steps=60),
        dict(img=24, c1=24, prim_types=6, n_cls=4, bsz=24, lr=0.08, steps=50),
        dict(img=18, c1=16, prim_types=8, n_cls=6, bsz=40, lr=0.05, steps=70),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    model = CapsNet(cfg["img"], cfg["c1"], cfg["prim_types"], cfg["n_cls"])
    lr = 1e-3 if fixed else cfg["lr"]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = _data(g, cfg["steps"], cfg["bsz"], cfg["img"], cfg["n_cls"])
    return dict(model=model, optimizer=opt, loss_fn=MarginLoss(), batches=batches,
                steps=cfg["steps"])
