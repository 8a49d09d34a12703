"""FitNets hint distillation: post-ReLU student features regressed onto PRE-ReLU teacher features.

Mechanism: a thin student CNN is distilled from a frozen, BN-folded teacher with a
FitNets-style hint loss (loss = CE + beta * MSE(student hint, teacher hint)); teacher and
student have the same number of channels at the hint layer, so no regressor is used.  The
teacher feature is grabbed with a forward hook on the teacher's folded conv+BN, i.e.
BEFORE its ReLU, where most values are negative (trained BN layers before a ReLU have
negative shifts; here ~90% of the teacher's pre-activations are < 0), while the student
hint is taken after the student's ReLU (>= 0).  The hint loss can only lower the student's
positive outputs towards the negative targets: within ~10 SGD steps it drives the student's
BN shift/scale down until (almost) every unit of the hint layer outputs 0 for every input
(>98% of the hint map is zero, most channels entirely).  A dead unit passes no gradient,
neither hint nor CE, so it cannot come back; the classifier is left with the few channels
that BN batch statistics occasionally push above zero, and the total loss, dominated by the
hint term beta * mean((0 - t)^2) of the dead map, plateaus right after the collapse.

ORIGIN: ``student.hint.2``, the student's ReLU at the hint layer: its units are the ones
that die; everything below it stops receiving gradient, everything above sees zeros.

Fix: take the teacher hint at the same position as the student's (after the teacher's
ReLU), as FitNets prescribes ("u_h and r must have the same non-linearity").
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "student.hint.2"
SOURCE = ("FitNets: Hints for Thin Deep Nets (Romero et al. 2015) and 'A Comprehensive Overhaul of Feature "
          "Distillation' (Heo et al. 2019) on pre-ReLU teacher features; KD repo issues where the hint "
          "layer's ReLU outputs go all-zero and accuracy stays at chance")


def conv_bn_relu(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Student(nn.Module):
    def __init__(self, w, hint_ch, n_cls):
        super().__init__()
        self.stem = conv_bn_relu(3, w, 1)
        self.hint = conv_bn_relu(w, hint_ch, 2)
        self.top = conv_bn_relu(hint_ch, 2 * hint_ch, 2)
        self.fc = nn.Linear(2 * hint_ch, n_cls)

    def forward(self, x):
        h = self.hint(self.stem(x))
        z = self.top(h)
        return self.fc(F.adaptive_avg_pool2d(z, 1).flatten(1)), h


class FoldedTeacher(nn.Module):
    """Frozen teacher trunk with BatchNorm folded into conv weights/biases (deploy form)."""

    def __init__(self, hint_ch, g):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, 1, 1)
        self.conv2 = nn.Conv2d(32, hint_ch, 3, 2, 1)
        with torch.no_grad():
            for c in (self.conv1, self.conv2):
                c.weight.copy_(torch.randn(c.weight.shape, generator=g) * math.sqrt(2.0 / (c.weight[0].numel())))
                c.bias.zero_()
        self.requires_grad_(False)

    def calibrate(self, x, shift, scale):
        # fold a BN whose running stats match the data: pre-ReLU output ~ N(shift, scale^2)
        with torch.no_grad():
            z = self.conv2(F.relu(self.conv1(x)))
            m, s = z.mean((0, 2, 3)), z.std((0, 2, 3))
            self.conv2.weight.mul_((scale / s).view(-1, 1, 1, 1))
            self.conv2.bias.copy_(shift - m * scale / s)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x)))           # pre-ReLU hint feature


class HintDistiller(nn.Module):
    def __init__(self, w, hint_ch, n_cls, g, fixed):
        super().__init__()
        self.student = Student(w, hint_ch, n_cls)
        self.teacher = FoldedTeacher(hint_ch, g)
        self.fixed = fixed

    def forward(self, x):
        logits, s_hint = self.student(x)
        with torch.no_grad():
            t_pre = self.teacher(x)
            t_hint = F.relu(t_pre) if self.fixed else t_pre
        return logits, s_hint, t_hint


class HintKDLoss(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, out, y):
        logits, s_hint, t_hint = out
        return F.cross_entropy(logits, y) + self.beta * F.mse_loss(s_hint, t_hint)


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = y.float() * math.pi / n_cls + 0.1 * torch.randn(b, generator=g)
    freq = 3.0 + (y % 2).float() * 2.0
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    col = torch.stack([torch.ones(b), (y % 3).float() - 1, torch.randn(b, generator=g) * 0.3], 1)
    img = base[:, None] * (1 + 0.3 * col[:, :, None, None]) + 0.6 * torch.randn(b, 3, 16, 16, generator=g)
    return img / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, hint=16, bs=32, lr=0.05, beta=10.0, steps=100, nesterov=False),
           dict(w=12, hint=24, bs=48, lr=0.1, beta=10.0, steps=90, nesterov=True),
           dict(w=16, hint=32, bs=24, lr=0.05, beta=20.0, steps=120, nesterov=False)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    n_cls = 8
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = HintDistiller(cfg["w"], cfg["hint"], n_cls, g, fixed)
    calib = torch.cat([b[0] for b in batches[:4]])
    model.teacher.calibrate(calib, shift=-1.5, scale=1.0)
    # usual recipe: weight decay on conv/linear weights only, not on BN affine params / biases
    decay = [p for n, p in model.student.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.student.named_parameters() if p.ndim <= 1]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=cfg["lr"], momentum=0.9, nesterov=cfg["nesterov"])
    return dict(model=model, optimizer=opt, loss_fn=HintKDLoss(cfg["beta"]), batches=batches,
                steps=cfg["steps"])
