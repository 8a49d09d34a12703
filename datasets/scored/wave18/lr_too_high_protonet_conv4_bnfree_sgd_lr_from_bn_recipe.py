"""Prototypical network (Snell et al. 2017) with the Conv-4 embedding
(conv3x3 -> ReLU -> maxpool, x4, He-initialised), trained episodically on N-way
K-shot tasks with the softmax over negative squared Euclidean distances to the
class prototypes.

Mechanism: the user removed the BatchNorm layers from Conv-4 ("episodes are
tiny, BN statistics are noisy") but kept the SGD recipe tuned for the BN
version: SGD(momentum=0.9) at lr=0.1-0.2.  Without BN the effective step is
far too large: the logits are *squared* distances between un-normalised
embeddings, so a step that enlarges the conv weights by a few percent grows the
logits quadratically; the largest per-layer update/weight ratios are 2e-2 to
1e0 on the first steps instead of ~1e-3, the loss oscillates, jumps to 1e1-1e4
and overflows to inf/NaN within a few to a few dozen episodes.

ORIGIN: None -- the overshoot is global (every conv layer's step is too large).

Fix: SGD at lr=0.003 (same momentum, BN-free model, init, episodes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Snell, Swersky & Zemel 2017 'Prototypical Networks' Conv-4 encoder; "
          "BN-free few-shot encoders trained with the BN-era SGD lr=0.1 and the "
          "reported 'prototypical loss becomes nan after a few episodes' symptom")


def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))


class ProtoNet(nn.Module):
    def __init__(self, chans, way, shot):
        super().__init__()
        layers = []
        c = 1
        for h in chans:
            layers.append(conv_block(c, h))
            c = h
        self.encoder = nn.Sequential(*layers)
        self.way, self.shot = way, shot
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, support, query):          # support (way*shot, 1, H, W) ordered by class
        zs = self.encoder(support).flatten(1)
        zq = self.encoder(query).flatten(1)
        protos = zs.view(self.way, self.shot, -1).mean(1)
        return -torch.cdist(zq, protos).pow(2)   # logits = -squared distance


def _episodes(g, n_classes, steps, way, shot, n_query, img):
    protos = (torch.rand(n_classes, 1, img + 4, img + 4, generator=g) < 0.3).float()
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1)

    def sample(cls, n):
        out = []
        for _ in range(n):
            dx, dy = torch.randint(0, 5, (2,), generator=g).tolist()
            out.append(protos[cls, :, dy:dy + img, dx:dx + img])
        x = torch.stack(out)
        return x + 0.25 * torch.randn(x.shape, generator=g)

    batches = []
    for _ in range(steps):
        classes = torch.randperm(n_classes, generator=g)[:way]
        sup = torch.cat([sample(int(c), shot) for c in classes])
        q_lab = torch.arange(way).repeat_interleave(n_query)
        qry = torch.cat([sample(int(c), n_query) for c in classes])
        batches.append(((sup, qry), q_lab))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(chans=(32, 32, 32, 32), way=5, shot=5, nq=5, img=28, lr=0.1, steps=80),
        dict(chans=(16, 32, 32, 64), way=10, shot=1, nq=4, img=24, lr=0.2, steps=90),
        dict(chans=(24, 24, 48, 48), way=5, shot=3, nq=6, img=32, lr=0.15, steps=70),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2024 + seed)
    model = ProtoNet(cfg["chans"], cfg["way"], cfg["shot"])
    lr = 0.003 if fixed else cfg["lr"]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = _episodes(g, 40, cfg["steps"], cfg["way"], cfg["shot"], cfg["nq"], cfg["img"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
