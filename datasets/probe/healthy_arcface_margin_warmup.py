"""HARD NEGATIVE: ArcFace (additive angular margin) classifier with a planned margin warm-up and scale s = 30.

What looks alarming but is benign: the head multiplies cosine logits by s = 30, so the first losses are large
(~5-15) and the gradients into the embedding are big; then the angular margin m is ramped linearly from 0 to
its final value over the first part of training (a documented trick for ArcFace convergence), so the loss
*rises* for a stretch while training is actually progressing, and the target logit goes through the
cos(theta + m) branch switch (th / mm "easy margin off" handling).  Nothing diverges: the cosine is clamped
before sqrt(1 - cos^2) (the safe variant with a floor of 1e-6), weights are normalised, BatchNorm keeps the
embedding scale fixed, and once the ramp ends the loss falls well below its start.
ORIGIN = None (healthy).  There is nothing to fix; build(fixed=True) returns the same run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Deng et al., 'ArcFace: Additive Angular Margin Loss for Deep Face Recognition' (CVPR 2019) and the "
          "insightface / pytorch re-implementations (s = 30-64, th/mm handling, margin warm-up used in several "
          "open face-recognition training recipes when training from scratch does not converge with full m).")


class ArcMarginHead(nn.Module):
    def __init__(self, emb, n_cls, s, m_final, warmup):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_cls, emb))
        nn.init.xavier_uniform_(self.weight)
        self.s, self.m_final, self.warmup = s, m_final, warmup
        self.calls = 0

    def forward(self, emb, labels):
        m = self.m_final * min(1.0, self.calls / self.warmup)
        if self.training:
            self.calls += 1
        cos = F.linear(F.normalize(emb), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - cos * cos).clamp(1e-6, 1.0))
        phi = cos * math.cos(m) - sine * math.sin(m)
        th, mm = math.cos(math.pi - m), math.sin(math.pi - m) * m
        phi = torch.where(cos > th, phi, cos - mm)
        onehot = F.one_hot(labels, cos.shape[1]).to(cos.dtype)
        return self.s * (onehot * phi + (1.0 - onehot) * cos)


class ArcFaceNet(nn.Module):
    def __init__(self, ch, emb, n_cls, s, m_final, warmup):
        super().__init__()
        self.conv1 = nn.Conv2d(1, ch, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, 2 * ch, 3, padding=1, stride=2)
        self.bn2 = nn.BatchNorm2d(2 * ch)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(8 * ch, emb)
        self.bn_emb = nn.BatchNorm1d(emb)
        self.arc = ArcMarginHead(emb, n_cls, s, m_final, warmup)

    def forward(self, x, labels):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        e = self.bn_emb(self.fc(self.pool(h).flatten(1)))
        return self.arc(e, labels)


def build(seed: int, fixed: bool = False) -> dict:
    # healthy: `fixed` changes nothing
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    n_cls = 8 + 2 * (seed % 4)
    ch = [6, 8, 10][seed % 3]
    emb = [16, 24, 32][(seed + 2) % 3]
    bs = [48, 64, 80][seed % 3]
    steps = 240 + 30 * (seed % 3)
    warmup = int(steps * [0.3, 0.4, 0.5][seed % 3])
    s = [30.0, 32.0, 40.0][seed % 3]
    m_final = [0.5, 0.4, 0.5][(seed + 1) % 3]
    lr = [0.05, 0.03][seed % 2]
    side = 12

    templates = F.avg_pool2d(torch.randn(n_cls, 1, side, side, generator=g), 3, 1, 1) * 2.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templates[y] + 1.0 * torch.randn(bs, 1, side, side, generator=g)
        batches.append(((x, y), y))

    model = ArcFaceNet(ch, emb, n_cls, s, m_final, warmup)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
