"""SimCLR (Chen et al. 2020) on small grayscale patches: conv encoder + 2-layer ReLU projection
head, NT-Xent loss on two augmented views, plain SGD with momentum.

Mechanism: the user followed SimCLR's linear scaling rule "lr = 0.3 x batch / 256" -- the
recipe written for LARS -- but kept a plain ``torch.optim.SGD`` and the paper's large-batch
base value, ending up with lr ~ 1-1.5.  LARS would have rescaled each layer's step by
||w|| / ||g||; plain SGD applies the raw step.  Within ~5 steps the updates are orders of
magnitude larger than the weights (update/weight ratio >> 1e-3): the encoder and projector
weights blow up, every projection z becomes dominated by one shared direction (all cosine
similarities ~1), and because NT-Xent is computed on L2-normalised z its gradient shrinks
like 1/||z||, so the run freezes at log(2N-1) with gradient norms ~1e-7.

ORIGIN: None -- no single module; every layer gets overshooting steps.

Fix: a plain-SGD learning rate (0.03); model, batches, temperature and momentum unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SimCLR linear lr scaling rule (0.3 x B/256, Chen et al. 2020) meant for LARS, applied "
          "to plain SGD; reports of SimCLR/NT-Xent loss stuck at log(2N-1) after the first "
          "few hundred iterations (collapsed, exploding-norm embeddings)")


class SimCLR(nn.Module):
    def __init__(self, ch, feat, proj_hidden, proj_out):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(2 * ch, feat))
        self.projector = nn.Sequential(
            nn.Linear(feat, proj_hidden), nn.ReLU(),
            nn.Linear(proj_hidden, proj_out))

    def forward(self, v1, v2):
        z = self.projector(self.encoder(torch.cat([v1, v2], 0)))
        return z


def make_nt_xent(tau):
    def nt_xent(z, _unused):
        z = F.normalize(z, dim=1)
        n = z.shape[0] // 2
        sim = z @ z.t() / tau
        sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
        pos = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        return F.cross_entropy(sim, pos)
    return nt_xent


def _augment(x, g):
    # random translation by up to 2 px + brightness jitter + noise
    n = x.shape[0]
    out = torch.empty_like(x)
    sh = torch.randint(-2, 3, (n, 2), generator=g)
    for i in range(n):
        out[i] = torch.roll(x[i], shifts=(int(sh[i, 0]), int(sh[i, 1])), dims=(1, 2))
    out = out * (0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=g))
    return out + 0.1 * torch.randn(x.shape, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(ch=16, feat=64, ph=64, po=32, bs=64, lr=1.2, steps=80),
           dict(ch=12, feat=48, ph=96, po=24, bs=48, lr=1.5, steps=70),
           dict(ch=16, feat=64, ph=128, po=32, bs=96, lr=1.0, steps=60)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    model = SimCLR(cfg["ch"], cfg["feat"], cfg["ph"], cfg["po"])

    # 12x12 patches: random oriented bars / blobs from 10 prototypes
    protos = torch.randn(10, 1, 12, 12, generator=g)
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1) * 3
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, 10, (cfg["bs"],), generator=g)
        x = protos[idx] + 0.3 * torch.randn(cfg["bs"], 1, 12, 12, generator=g)
        batches.append(((_augment(x, g), _augment(x, g)), torch.zeros(2 * cfg["bs"])))
    lr = 0.03 if fixed else cfg["lr"]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-6)
    return dict(model=model, optimizer=opt, loss_fn=make_nt_xent(0.5), batches=batches,
                steps=cfg["steps"])
