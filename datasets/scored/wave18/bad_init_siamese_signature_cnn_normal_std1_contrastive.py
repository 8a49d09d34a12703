"""Siamese CNN for signature verification (shared conv tower, Hadsell-Chopra-LeCun
contrastive loss on the Euclidean distance of the two embeddings), with the
conv and fc weights initialised by ``nn.init.normal_(m.weight)``.

Mechanism: the user wrote an init hook ``nn.init.normal_(m.weight)`` meaning
"Gaussian init" but left the default std=1.0.  For a 3x3 conv with fan-in
9*C_in the forward gain of each conv+ReLU block is about sqrt(fan_in/2) ~ 5-12,
so after 3-4 blocks and the fc head the embeddings have norms of ~1e4-1e6 and
the squared distance in the contrastive loss is ~1e8-1e12 at step 0.  The SGD
step on that loss multiplies the weights again and the loss overflows to
inf/NaN within a few steps.

ORIGIN: ``tower.0`` -- the first conv is where the geometric growth starts
(pixel inputs are O(1); its output is already ~5x larger and every later layer
compounds it).

Fix: Kaiming-normal (fan_in, relu) init of the conv / linear weights; same data,
pairs, optimiser and lr.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "tower.0"
SOURCE = ("Siamese signature verification (SigNet, Dey et al. 2017) with the "
          "Hadsell et al. 2006 contrastive loss; 'nn.init.normal_(m.weight) without std' "
          "init hook, a recurring PyTorch-forum 'siamese loss is nan' report")


class SiameseNet(nn.Module):
    def __init__(self, chans, emb_dim, img):
        super().__init__()
        layers = []
        c_in = 1
        for c in chans:
            layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            c_in = c
        self.tower = nn.Sequential(*layers)
        side = img // (2 ** len(chans))
        self.fc = nn.Linear(c_in * side * side, emb_dim)

    def embed(self, x):
        return self.fc(self.tower(x).flatten(1))

    def forward(self, x1, x2):
        return F.pairwise_distance(self.embed(x1), self.embed(x2))


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=2.0):
        super().__init__()
        self.margin = margin

    def forward(self, dist, same):
        # same = 1 for genuine pairs, 0 for forgeries
        pos = same * dist.pow(2)
        neg = (1 - same) * torch.clamp(self.margin - dist, min=0).pow(2)
        return 0.5 * (pos + neg).mean()


def _pairs(g, writers, n_steps, bsz, img):
    # each "writer" has a prototype stroke image; genuine samples are jittered copies
    protos = (torch.rand(writers, 1, img, img, generator=g) < 0.25).float()
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1)
    batches = []
    for _ in range(n_steps):
        a = torch.randint(0, writers, (bsz,), generator=g)
        same = (torch.rand(bsz, generator=g) < 0.5).float()
        other = torch.randint(0, writers, (bsz,), generator=g)
        other = torch.where(same.bool(), a, torch.where(other == a, (other + 1) % writers, other))
        x1 = protos[a] + 0.15 * torch.randn(bsz, 1, img, img, generator=g)
        x2 = protos[other] + 0.15 * torch.randn(bsz, 1, img, img, generator=g)
        batches.append(((x1, x2), same))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(chans=(16, 32, 32), emb=32, img=24, lr=0.01, bsz=32, steps=80, writers=12),
        dict(chans=(8, 16, 32, 64), emb=64, img=32, lr=0.005, bsz=24, steps=70, writers=16),
        dict(chans=(16, 32), emb=16, img=20, lr=0.02, bsz=48, steps=90, writers=10),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    model = SiameseNet(cfg["chans"], cfg["emb"], cfg["img"])
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)          # std defaults to 1.0
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = _pairs(g, cfg["writers"], cfg["steps"], cfg["bsz"], cfg["img"])
    return dict(model=model, optimizer=opt, loss_fn=ContrastiveLoss(2.0), batches=batches,
                steps=cfg["steps"])
