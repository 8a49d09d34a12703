"""Semi-supervised segmentation with Mean Teacher: a small conv encoder-decoder (student) is
trained on a few labelled images (pixel CE) plus a consistency MSE between its softmax and that of
an EMA teacher on unlabelled, differently-noised images. The teacher is updated by an optimizer
step post-hook (EMA decay 0.95), and the consistency weight follows the paper's sigmoid ramp-up
exp(-5(1-t)^2) from ~0 to its maximum over the first 60% of training. The objective itself changes
during the run: as the ramp adds a growing consistency term the total loss flattens and bumps up
around mid-training, and the unlabelled term (fresh noisy images every step) is noisy; both are
expected, the supervised part keeps improving and the run is healthy."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Tarvainen & Valpola 2017 'Mean teachers are better role models' (sigmoid ramp-up, EMA "
          "teacher); Perone et al. 2018 mean teacher for medical segmentation")


def _net():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, 3, padding=2, dilation=2), nn.ReLU(),
        nn.Conv2d(16, 16, 3, padding=4, dilation=4), nn.ReLU(),
        nn.Conv2d(16, 3, 1),
    )


class MeanTeacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.student = _net()
        self.teacher = _net()
        self.teacher.load_state_dict(self.student.state_dict())
        for p in self.teacher.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def ema_update(self, decay=0.95):
        for pt, ps in zip(self.teacher.parameters(), self.student.parameters()):
            pt.mul_(decay).add_(ps.detach(), alpha=1 - decay)

    def forward(self, x_lab, x_unl_s, x_unl_t, ramp):
        with torch.no_grad():
            t_prob = self.teacher(x_unl_t).softmax(1)
        return {"sup_logits": self.student(x_lab), "s_prob": self.student(x_unl_s).softmax(1),
                "t_prob": t_prob, "ramp": ramp}


def _images(g, n, H=24):
    yy, xx = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="ij")
    img = 0.2 * torch.randn(n, 1, H, H, generator=g)
    mask = torch.zeros(n, H, H, dtype=torch.long)
    for b in range(n):
        for c in (1, 2):
            cx, cy = (4 + 16 * torch.rand(2, generator=g)).tolist()
            r = 3 + 3 * float(torch.rand(1, generator=g))
            m = ((xx - cx) ** 2 + (yy - cy) ** 2) < r * r
            img[b, 0][m] += 1.0 if c == 1 else -1.0
            mask[b][m] = c
    return img, mask


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MeanTeacher()
    opt = torch.optim.Adam(model.student.parameters(), lr=2e-3)
    opt.register_step_post_hook(lambda o, a, k: model.ema_update())
    steps = 150
    lab_pool = [_images(g, 4) for _ in range(5)]              # few labelled images
    batches = []
    for s in range(steps):
        xl, ml = lab_pool[s % len(lab_pool)]
        xu, _ = _images(g, 8)                                    # fresh unlabelled images
        xs = xu + 0.3 * torch.randn(xu.shape, generator=g)
        xt = xu + 0.3 * torch.randn(xu.shape, generator=g)
        t = min(1.0, s / (0.6 * steps))
        ramp = torch.tensor(math.exp(-5 * (1 - t) ** 2))
        batches.append(((xl, xs, xt, ramp), ml))

    def loss_fn(out, mask):
        sup = F.cross_entropy(out["sup_logits"], mask)
        cons = ((out["s_prob"] - out["t_prob"]) ** 2).sum(1).mean()
        return sup + 10.0 * out["ramp"] * cons

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
