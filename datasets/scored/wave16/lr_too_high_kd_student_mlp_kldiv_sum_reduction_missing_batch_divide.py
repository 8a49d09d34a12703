"""Logit-distillation MLP student whose KL term uses reduction='sum' without dividing by the batch.

Mechanism: a small BN-free GELU MLP student (the model that will ship on the device) is
distilled from a frozen wider teacher with Hinton's loss
alpha * CE(student, y) + (1 - alpha) * T^2 * KL(softmax(t/T) || softmax(s/T)).  The KL is
written ``F.kl_div(log_p_s, p_t, reduction='sum') * T**2`` copied from a repo that then
divides by the batch size; the ``/ batch_size`` was dropped.  The distillation gradient is
therefore B (32-128) times larger than the recipe's, i.e. momentum SGD runs with an
effective learning rate B times too high on the student.  Update/weight ratios are ~0.1-1
from the first step: the student's weights and logits overshoot, grow by orders of
magnitude within a few steps and the loss goes to inf/NaN.

ORIGIN: None.  Every student parameter receives the B-times oversized step; no single
module starts the divergence.

Fix: use the batch-mean KL (``reduction='batchmean'``), i.e. the step size the lr was tuned
for; the student, teacher, data and lr are unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Hinton, Vinyals & Dean 2015 'Distilling the Knowledge in a Neural Network' (T^2 scaling); "
          "PyTorch KLDivLoss docs warning on reduction ('batchmean' gives the true KL); KD repos computing "
          "kl_div(..., reduction='sum') * T**2 / batch_size")


class Student(nn.Module):
    def __init__(self, d_in, width, n_cls):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, width), nn.GELU(), nn.Linear(width, width), nn.GELU(),
                                 nn.Linear(width, n_cls))

    def forward(self, x):
        return self.net(x)


class Teacher(nn.Module):
    def __init__(self, d_in, n_cls, g):
        super().__init__()
        self.l1 = nn.Linear(d_in, 512)
        self.l2 = nn.Linear(512, n_cls)
        with torch.no_grad():
            self.l1.weight.copy_(torch.randn(512, d_in, generator=g) * math.sqrt(2.0 / d_in))
            self.l1.bias.zero_()
            self.l2.weight.copy_(torch.randn(n_cls, 512, generator=g) * math.sqrt(1.0 / 512) * 4.0)
            self.l2.bias.zero_()
        self.requires_grad_(False)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class KDWrapper(nn.Module):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def forward(self, x):
        with torch.no_grad():
            t = self.teacher(x)
        return self.student(x), t


class HintonKDLoss(nn.Module):
    def __init__(self, T, alpha, batchmean):
        super().__init__()
        self.T, self.alpha, self.batchmean = T, alpha, batchmean

    def forward(self, out, y):
        s, t = out
        log_p_s = F.log_softmax(s / self.T, dim=1)
        p_t = F.softmax(t / self.T, dim=1)
        if self.batchmean:
            kl = F.kl_div(log_p_s, p_t, reduction="batchmean")
        else:
            kl = F.kl_div(log_p_s, p_t, reduction="sum")        # BUG: '/ batch_size' dropped
        return self.alpha * F.cross_entropy(s, y) + (1 - self.alpha) * self.T ** 2 * kl


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=128, T=4.0, alpha=0.3, lr=0.08, bs=64, steps=80),
           dict(width=96, T=3.0, alpha=0.5, lr=0.06, bs=128, steps=60),
           dict(width=160, T=6.0, alpha=0.1, lr=0.05, bs=32, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5150 + seed)
    d_in, n_cls = 40, 10
    teacher = Teacher(d_in, n_cls, g)
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randn(cfg["bs"], d_in, generator=g)
        with torch.no_grad():
            y = teacher(x).argmax(1)                  # hard labels agree with the teacher
        batches.append((x, y))
    model = KDWrapper(Student(d_in, cfg["width"], n_cls), teacher)
    opt = torch.optim.SGD(model.student.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=HintonKDLoss(cfg["T"], cfg["alpha"], batchmean=fixed),
                batches=batches, steps=cfg["steps"])
