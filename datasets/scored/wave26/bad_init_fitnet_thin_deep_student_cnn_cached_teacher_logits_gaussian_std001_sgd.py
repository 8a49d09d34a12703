"""Knowledge distillation into a thin-and-deep plain CNN student (FitNets-style student, no
BatchNorm), trained with Hinton KD (T^2-scaled KL to cached teacher logits at temperature T plus
hard-label cross-entropy).

Mechanism: the student's conv and linear weights are initialised with the Caffe-era recipe
`normal_(0, 0.01)` (bias 0) that was copied from the teacher's training script, where BatchNorm made
it harmless.  For a 3x3 conv with 24-32 input channels, std 0.01 gives a per-layer gain of
0.01*sqrt(9*C/2) ~ 0.1, so after 8-10 layers the activations (and the back-propagated gradients)
are ~1e-8-1e-10 of the input scale from step 0.  The student's logits are ~0, its softmax is uniform,
and SGD receives almost no gradient below the classifier: the loss stays at its uniform-student
value, 0.7 * T^2 * KL(teacher_T || uniform) + 0.3 * ln(C).

ORIGIN: "features.0" -- the first conv: the geometric shrinkage starts at the first too-small layer
and compounds through every following one.

Fix: He (kaiming_normal_, fan_in, relu) init of every conv (the linear classifier keeps its small
normal(0, 0.01) init, which is right for a last layer); same student, teacher logits, temperature,
loss weights and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Romero et al. 2015 'FitNets: Hints for Thin Deep Nets' (thin deep students hard to train "
          "from scratch); Caffe gaussian std=0.01 weight_filler copied into BN-free students; He et al. "
          "2015 on std 0.01 init stalling deep plain nets")


class ThinDeepStudent(nn.Module):
    def __init__(self, depth, ch, n_cls, fixed):
        super().__init__()
        layers = [nn.Conv2d(1, ch, 3, padding=1), nn.ReLU()]
        for i in range(depth - 1):
            stride = 2 if i in (1, 3) else 1
            layers += [nn.Conv2d(ch, ch, 3, padding=1, stride=stride), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(ch, n_cls)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                if fixed and isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [8, 9, 10][seed % 3]
    ch = [24, 32, 28][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [0.012, 0.012, 0.015][seed % 3]
    n_cls, T, alpha, steps = 6, 4.0, 0.7, 200
    templates = torch.randn(n_cls, 1, 16, 16, generator=g)
    templates = F.avg_pool2d(templates, 3, 1, 1) * 3
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templates[y] + 0.8 * torch.randn(bs, 1, 16, 16, generator=g)
        # cached teacher logits: a strong (but not perfect) template-matching teacher
        t_logits = 12.0 * F.normalize(x.flatten(1), dim=1) @ F.normalize(templates.flatten(1), dim=1).t()
        batches.append((x, (t_logits, y)))
    torch.manual_seed(seed)
    model = ThinDeepStudent(depth, ch, n_cls, fixed)

    def loss_fn(s_logits, target):
        t_logits, y = target
        kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1),
                      reduction="batchmean") * T * T
        return alpha * kd + (1 - alpha) * F.cross_entropy(s_logits, y)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
