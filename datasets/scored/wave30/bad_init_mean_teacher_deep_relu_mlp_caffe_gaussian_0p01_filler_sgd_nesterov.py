"""Mean Teacher semi-supervised training of a deep plain ReLU MLP on tabular sensor features:
each batch mixes a few labelled rows with many unlabelled ones; the student sees one noisy view,
an EMA teacher (updated at the start of every forward from the student's current weights) sees
another, and the loss is cross-entropy on the labelled rows plus the squared distance between the
student's and the teacher's softmax outputs on all rows.

Mechanism: the MLP's weights are initialised with the old Caffe "gaussian, std 0.01" filler
(``nn.init.normal_(w, 0, 0.01)`` on every Linear), ported from an AlexNet-era prototxt.  With
fan-in 128-256 that multiplies the activation scale by ~0.01 * sqrt(fan_in / 2) ~ 0.1 per layer,
so after 7-9 layers the signal reaching the classifier is ~1e-8 of the input: the logits of both
student and teacher are the constant bias, the consistency term is ~0, and the gradient reaching
each layer is scaled by the product of the (tiny) weights above it.  SGD with Nesterov momentum
cannot escape: the supervised loss stays at log(C) (VGG paper, Simonyan & Zisserman 2015, notes
that deep nets with this init stall without layer-wise pre-training).

ORIGIN = "student.net.0": the first Linear of the trained (student) network is where the
geometric shrinkage starts; every later Linear repeats the same factor.  The teacher is a copy
with no gradients, so it is not the origin.

Fix: Kaiming (fan-in, ReLU) initialisation of the Linear layers; everything else identical.
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "student.net.0"
SOURCE = ("Caffe 'gaussian std 0.01' weight filler reused in a deep plain network; documented "
          "stall of deep nets under this init in Simonyan & Zisserman 2015 (VGG, sec. 3.1) and "
          "Glorot & Bengio 2010; mean-teacher loop after Tarvainen & Valpola 2017.")


class MLP(nn.Module):
    def __init__(self, d_in, width, depth, n_classes):
        super().__init__()
        layers = []
        d = d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, n_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class MeanTeacher(nn.Module):
    def __init__(self, student, ema):
        super().__init__()
        self.student = student
        self.teacher = copy.deepcopy(student)
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.ema = ema

    def forward(self, x_student, x_teacher):
        if self.training:
            with torch.no_grad():
                for pt, ps in zip(self.teacher.parameters(), self.student.parameters()):
                    pt.mul_(self.ema).add_(ps.detach(), alpha=1 - self.ema)
        return self.student(x_student), self.teacher(x_teacher)


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    depth = pick(1, [7, 8, 9])
    width = pick(2, [128, 192, 256])
    lr = pick(3, [0.01, 0.015, 0.02])
    n_lab = pick(4, [16, 24, 32])
    n_unlab = 3 * n_lab
    steps = 120
    d_in, n_classes = 20, 6

    student = MLP(d_in, width, depth, n_classes)
    for m in student.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    model = MeanTeacher(student, ema=0.95)

    centres = 2.0 * torch.randn(n_classes, d_in, generator=g)
    mix = torch.randn(d_in, d_in, generator=g) / d_in ** 0.5

    def draw(n):
        y = torch.randint(0, n_classes, (n,), generator=g)
        z = centres[y] + torch.randn(n, d_in, generator=g)
        return torch.tanh(z @ mix) * 2.0 + 0.3 * z, y

    batches = []
    for _ in range(steps):
        x, y = draw(n_lab + n_unlab)
        y = y.clone()
        y[n_lab:] = -1  # unlabelled rows
        xs = x + 0.2 * torch.randn(x.shape, generator=g)
        xt = x + 0.2 * torch.randn(x.shape, generator=g)
        batches.append(((xs, xt), y))

    def loss_fn(out, y):
        s_logits, t_logits = out
        lab = y >= 0
        sup = F.cross_entropy(s_logits[lab], y[lab])
        cons = ((F.softmax(s_logits, -1) - F.softmax(t_logits.detach(), -1)) ** 2).sum(-1).mean()
        return sup + 1.0 * cons

    optimizer = torch.optim.SGD(student.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
