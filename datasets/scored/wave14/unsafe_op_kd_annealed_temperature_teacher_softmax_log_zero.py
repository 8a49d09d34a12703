"""Hinton KD with an annealed temperature and soft targets logged with torch.log(softmax).

Mechanism: a frozen, very confident teacher (logit gaps of 100+ on easy inputs, typical of a
long-trained checkpoint without label smoothing) distils into a small MLP student.  The
user anneals the distillation temperature T linearly from 8 to 1 over training and builds
the soft targets as ``p = softmax(t / T)`` and ``log_p = torch.log(p)`` for the manual KL
sum(p * (log_p - log_q)).  While T is large every teacher probability is representable
and the run is calm.  Once T falls below (max teacher logit gap) / 104, the smallest
teacher probabilities underflow to exactly 0.0 in float32, ``torch.log`` returns -inf and
p * log_p = 0 * (-inf) = NaN: the loss is NaN from that step on.

ORIGIN is ``soft_targets``: the module that turns teacher logits into (p, log p); its
log(softmax) is the first op that produces a non-finite value.

Fix: compute the teacher log-probabilities with the fused ``F.log_softmax(t / T)`` (finite
even where the probability underflows, so 0 * finite = 0).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "soft_targets"
SOURCE = ("Hinton, Vinyals & Dean 2015 KD; temperature annealing schedules (e.g. Jafari et "
          "al. 2021 'Annealing KD'); log(softmax) underflow -> 0 * log 0 = NaN in manual KL")


class SoftTargets(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.fused = fused

    def forward(self, teacher_logits, T):
        p = F.softmax(teacher_logits / T, dim=1)
        log_p = F.log_softmax(teacher_logits / T, dim=1) if self.fused else torch.log(p)
        return p, log_p


class Distiller(nn.Module):
    def __init__(self, teacher, student, t_start, t_end, anneal_steps, fused):
        super().__init__()
        self.teacher = teacher
        self.student = student
        self.soft_targets = SoftTargets(fused)
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.t_start, self.t_end, self.anneal_steps = t_start, t_end, anneal_steps
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def temperature(self):
        frac = min(1.0, self.step.item() / self.anneal_steps)
        return self.t_start + (self.t_end - self.t_start) * frac

    def forward(self, x):
        T = self.temperature()
        if self.training:
            self.step += 1
        with torch.no_grad():
            t = self.teacher(x)
        p, log_p = self.soft_targets(t, T)
        return self.student(x), p, log_p, T


def kd_loss(out, y):
    s, p, log_p, T = out
    log_q = F.log_softmax(s / T, dim=1)
    kl = (p * (log_p - log_q)).sum(1).mean()
    return 0.9 * T * T * kl + 0.1 * F.cross_entropy(s, y)


def make_teacher(d_in, n_classes, scale, g):
    teacher = nn.Sequential(nn.Linear(d_in, 256), nn.ReLU(), nn.Linear(256, n_classes))
    with torch.no_grad():
        teacher[0].weight.copy_(torch.randn(256, d_in, generator=g) / d_in ** 0.5)
        teacher[0].bias.zero_()
        teacher[2].weight.copy_(scale * torch.randn(n_classes, 256, generator=g) / 16)
        teacher[2].bias.zero_()
    return teacher.eval()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=128, bs=64, scale=40.0, lr=1e-3, steps=150),
           dict(hidden=96, bs=48, scale=30.0, lr=2e-3, steps=130),
           dict(hidden=160, bs=96, scale=50.0, lr=1e-3, steps=170)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    d_in, n_classes = 32, 10
    teacher = make_teacher(d_in, n_classes, cfg["scale"], g)
    student = nn.Sequential(nn.Linear(d_in, cfg["hidden"]), nn.ReLU(),
                            nn.Linear(cfg["hidden"], cfg["hidden"]), nn.ReLU(),
                            nn.Linear(cfg["hidden"], n_classes))
    model = Distiller(teacher, student, 8.0, 1.0, int(0.8 * cfg["steps"]), fused=fixed)
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randn(cfg["bs"], d_in, generator=g)
        with torch.no_grad():
            y = teacher(x).argmax(1)
        batches.append((x, y))
    opt = torch.optim.Adam(model.student.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=kd_loss, batches=batches,
                steps=cfg["steps"])
