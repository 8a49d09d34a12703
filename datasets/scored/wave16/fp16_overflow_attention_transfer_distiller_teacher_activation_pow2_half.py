"""Attention-transfer KD under fp16 autocast: the teacher's activation map x.pow(2) overflows half.

Mechanism: a thin student CNN is distilled from a frozen wide teacher with Attention
Transfer (Zagoruyko & Komodakis 2017): for each of three stage outputs the spatial
attention map Q = mean_c(A_c^2) is L2-normalised and the loss is
CE + beta/2 * sum_j ||Q_s/|Q_s| - Q_t/|Q_t|||^2.  Training runs under fp16 autocast (CPU
autocast here, same op lists as in the usual AMP recipe) with a GradScaler.  The conv
outputs are float16, and ``x.pow(2).mean(1)`` is not on autocast's fp32 list, so it is
computed in half.  The teacher's last-stage map is the un-normalised sum of its residual
branches (BN folded, no final norm): its activations reach several hundred, and any
value above sqrt(65504) ~ 256 squares to inf.  The teacher's attention map then contains
inf, F.normalize divides inf by an inf norm -> NaN, and the AT loss (hence the total loss)
is NaN on the first step; the GradScaler skips every step but cannot fix a NaN forward, so
the loss stays NaN.

ORIGIN: ``teacher_at.2``, the AttentionMap module applied to the teacher's third stage: it
is the op that first produces a non-finite value (half pow(2) past 65504).

Fix: compute the attention maps in float32 (``x.float().pow(2).mean(1)``), the usual
"fp32 for this op" treatment of power/sum-of-squares reductions under AMP.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "teacher_at.2"
SOURCE = ("Attention Transfer (Zagoruyko & Komodakis, ICLR 2017, szagoruyko/attention-transfer at(x) = "
          "F.normalize(x.pow(2).mean(1).view(B,-1))); KD repos' AMP issues: 'loss nan with --amp in AT/FitNet "
          "distillers'")


class AttentionMap(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, x):
        if self.fp32:
            x = x.float()
        return F.normalize(x.pow(2).mean(1).flatten(1), dim=1)


def conv_bn_relu(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Student(nn.Module):
    def __init__(self, w, n_cls):
        super().__init__()
        self.s1 = conv_bn_relu(3, w, 1)
        self.s2 = nn.Sequential(conv_bn_relu(w, 2 * w, 2), conv_bn_relu(2 * w, 2 * w, 1))
        self.s3 = nn.Sequential(conv_bn_relu(2 * w, 4 * w, 2), conv_bn_relu(4 * w, 4 * w, 1))
        self.fc = nn.Linear(4 * w, n_cls)

    def forward(self, x):
        f1 = self.s1(x)
        f2 = self.s2(f1)
        f3 = self.s3(f2)
        return self.fc(F.adaptive_avg_pool2d(f3, 1).flatten(1)), [f1, f2, f3]


class FoldedResStage(nn.Module):
    """Teacher residual stage in deploy form (BN folded): out = shortcut(x) + sum of branches."""

    def __init__(self, cin, cout, stride, n_blocks, gain, g):
        super().__init__()
        self.down = nn.Conv2d(cin, cout, 1, stride)
        self.branches = nn.ModuleList([nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1), nn.ReLU(),
                                                     nn.Conv2d(cout, cout, 3, 1, 1)) for _ in range(n_blocks)])
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    fan_in = m.weight[0].numel()
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * gain * math.sqrt(2.0 / fan_in))
                    m.bias.copy_(0.1 * torch.rand(m.bias.shape, generator=g))

    def forward(self, x):
        h = self.down(x)
        for br in self.branches:
            h = h + br(F.relu(h))
        return F.relu(h)


class Distiller(nn.Module):
    def __init__(self, w, n_cls, g, fp32_at):
        super().__init__()
        self.student = Student(w, n_cls)
        # frozen teacher; activation scale grows stage by stage (residual sums, no final norm)
        self.teacher = nn.ModuleList([FoldedResStage(3, 2 * w, 1, 1, 1.5, g),
                                      FoldedResStage(2 * w, 4 * w, 2, 1, 1.5, g),
                                      FoldedResStage(4 * w, 8 * w, 2, 2, 1.5, g)])
        self.teacher.requires_grad_(False)
        self.student_at = nn.ModuleList([AttentionMap(fp32_at) for _ in range(3)])
        self.teacher_at = nn.ModuleList([AttentionMap(fp32_at) for _ in range(3)])

    def forward(self, x):
        logits, s_feats = self.student(x)
        with torch.no_grad():
            t_feats, h = [], x
            for stage in self.teacher:
                h = stage(h)
                t_feats.append(h)
        q_s = [m(f) for m, f in zip(self.student_at, s_feats)]
        q_t = [m(f) for m, f in zip(self.teacher_at, t_feats)]
        return logits, q_s, q_t


class ATLoss(nn.Module):
    def __init__(self, beta=1000.0):
        super().__init__()
        self.beta = beta

    def forward(self, out, y):
        logits, q_s, q_t = out
        at = sum((a - b).pow(2).mean() for a, b in zip(q_s, q_t))
        return F.cross_entropy(logits, y) + self.beta / 2 * at


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 4).float() * math.pi / 4 + 0.1 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 4).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    img = base[:, None] * (1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)) + 0.5 * torch.randn(b, 3, 16, 16, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=8, bs=24, lr=0.05, steps=45),
           dict(w=6, bs=32, lr=0.03, steps=40),
           dict(w=8, bs=16, lr=0.08, steps=50)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3030 + seed)
    n_cls = 8
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = Distiller(cfg["w"], n_cls, g, fp32_at=fixed)
    opt = torch.optim.SGD(model.student.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=5e-4, nesterov=True)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    return dict(model=model, optimizer=opt, loss_fn=ATLoss(), batches=batches, steps=cfg["steps"],
                amp_dtype=torch.float16, scaler=scaler)
