"""DINO self-distillation (student + EMA teacher + DINOLoss with centering, one nn.Module).
AdamW at lr 5e-2 (10x the usual DINO lr, no warmup): the first large steps blow the
student/teacher outputs around, the centering then flattens the teacher and the run falls
into the uniform-collapse fixed point (loss stuck at log(out_dim) = 4.85) for good.
fixed=True: the same run with lr 5e-3, which escapes the plateau and trains to ~0.1-0.4.
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("facebookresearch/dino main_dino.py / DINOLoss (center momentum 0.9, teacher temp 0.04, "
          "student temp 0.1); DINO README and issues: too high lr without warmup collapses to the uniform "
          "solution (loss stuck at log(out_dim))")

IN_DIM, HID, BOT, OUT_DIM = 32, 128, 64, 128
N_PROTO, BATCH, STEPS = 12, 64, 400


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, HID), nn.GELU(), nn.Linear(HID, BOT), nn.GELU())
        self.last_layer = nn.Linear(BOT, out_dim)

    def forward(self, x):
        return self.last_layer(self.mlp(x))


class DINOLoss(nn.Module):
    def __init__(self, out_dim, student_temp=0.1, teacher_temp=0.04, center_momentum=0.9):
        super().__init__()
        self.student_temp, self.teacher_temp, self.center_momentum = student_temp, teacher_temp, center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        student_out = (student_output / self.student_temp).chunk(2)
        teacher_out = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1).detach().chunk(2)
        total, n = 0.0, 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                logp = F.log_softmax(student_out[v], dim=-1)
                total = total + torch.sum(-q * logp, dim=-1).mean()
                n += 1
        with torch.no_grad():
            batch_center = teacher_output.mean(dim=0, keepdim=True)
            self.center.mul_(self.center_momentum).add_(batch_center * (1 - self.center_momentum))
        return total / n


class DINO(nn.Module):
    def __init__(self):
        super().__init__()
        self.student = nn.Sequential(nn.Linear(IN_DIM, HID), nn.GELU(), nn.Linear(HID, HID), nn.GELU(),
                                     DINOHead(HID, OUT_DIM))
        self.teacher = copy.deepcopy(self.student)
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.criterion = DINOLoss(OUT_DIM)
        self.momentum = 0.99

    def forward(self, v1, v2):
        if self.training:  # EMA update of the teacher with the weights of the last optimizer step
            with torch.no_grad():
                for ps, pt in zip(self.student.parameters(), self.teacher.parameters()):
                    pt.mul_(self.momentum).add_(ps.detach() * (1 - self.momentum))
        views = torch.cat([v1, v2])
        s = self.student(views)
        with torch.no_grad():
            t = self.teacher(views)
        return self.criterion(s, t)


def _augment(x, g):
    scale = 1 + 0.2 * torch.randn(x.shape[0], 1, generator=g)
    mask = (torch.rand(x.shape, generator=g) > 0.15).float()
    return (x * scale + 0.3 * torch.randn(x.shape, generator=g)) * mask


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    protos = 2.0 * torch.randn(N_PROTO, IN_DIM, generator=g)
    batches = []
    for _ in range(STEPS):
        idx = torch.randint(0, N_PROTO, (BATCH,), generator=g)
        x = protos[idx] + 0.5 * torch.randn(BATCH, IN_DIM, generator=g)
        batches.append(((_augment(x, g), _augment(x, g)), torch.zeros(BATCH)))
    model = DINO()
    lr = 5e-3 if fixed else 5e-2 * (0.9 + 0.1 * (seed % 3))  # 4.5e-2 .. 5.5e-2 when broken
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.04)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: out, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
