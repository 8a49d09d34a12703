"""HEALTHY (hard negative): CenterNet-style anchor-free detector on a small FPN neck,
with loss spikes on a few close-up batches that recover at once.

What it is
----------
A tiny backbone (three strided conv stages C2/C3/C4), an FPN top-down neck (1x1
laterals, nearest upsampling, add, 3x3 smoothing) producing P2 at stride 2, and
CenterNet heads on P2: a class-centre heatmap head and a box-size (w, h) head.  Losses
are the CenterNet ones: the penalty-reduced pixel-wise focal loss (alpha=2, beta=4,
sigmoid clamped to [1e-4, 1-1e-4] as in the reference code) normalised by the number of
objects in the batch, plus 0.1 x L1 on the raw box sizes (in pixels) at the centres.
Adam with a short linear warmup and a planned x0.1 lr step late in training (applied
by an optimiser step pre-hook, like a per-iteration scheduler).

Why it looks alarming but is benign
-----------------------------------
* The heatmap head's last bias is initialised to -2.19 (= -log((1-0.1)/0.1), the
  CenterNet/RetinaNet prior), so every heatmap sigmoid starts at ~0.1, i.e. the
  output layer looks "biased off / saturated" from step 0.  This is deliberate, and
  it is what keeps the focal loss stable.
* Three scheduled "close-up" batches (frames where one or two objects fill half or
  more of the image, 2-3x larger than anything else in the data) hit the size head with
  pixel errors of 20+ px.  The loss jumps 5-10x above the running level, above even the
  step-0 loss, and the gradient norm jumps 5-30x above its median.  Adam bounds
  the step, and the next ordinary batch is back on trend; nothing diverges.
* The size head regresses raw pixel sizes (no log / normalisation, as in CenterNet),
  so its early L1 term and its gradients are large, but they are stable and shrink
  quickly.
* The lr drops by 10x late in training, which flattens the curve (a planned change,
  not a stall).
The run trains steadily: the loss falls 4-7x over the run and never goes non-finite.
The spikes land at seed-dependent steps, always before the final 10 % of the run.

CAUSE = "healthy", ORIGIN = None.  fixed=True builds the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("CenterNet (Zhou et al., 'Objects as Points', xingyizhou/CenterNet): _neg_loss focal loss normalised "
          "by num_pos, _sigmoid clamp, hm bias init -2.19; issues asking why the total loss 'spikes' on "
          "some batches (wh loss in raw pixels); FPN neck as in Lin et al. 2017")


class FPNCenterNet(nn.Module):
    def __init__(self, c, n_cls):
        super().__init__()
        self.c2 = nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1), nn.ReLU(),
                                nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.c3 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU(),
                                nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.ReLU())
        self.c4 = nn.Sequential(nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.lat2 = nn.Conv2d(c, c, 1)
        self.lat3 = nn.Conv2d(2 * c, c, 1)
        self.lat4 = nn.Conv2d(2 * c, c, 1)
        self.smooth = nn.Conv2d(c, c, 3, padding=1)
        self.hm_head = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, n_cls, 1))
        self.wh_head = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, 2, 1))
        nn.init.constant_(self.hm_head[2].bias, -2.19)

    def forward(self, x):
        f2 = self.c2(x)
        f3 = self.c3(f2)
        f4 = self.c4(f3)
        p4 = self.lat4(f4)
        p3 = self.lat3(f3) + F.interpolate(p4, scale_factor=2, mode="nearest")
        p2 = self.lat2(f2) + F.interpolate(p3, scale_factor=2, mode="nearest")
        p2 = F.relu(self.smooth(p2))
        return self.hm_head(p2), self.wh_head(p2)


def _batch(g, b, s, n_cls, n_obj_range, colors, size_range=None):
    hs = s // 2
    img = 0.35 * torch.randn(b, 3, s, s, generator=g)
    hm = torch.zeros(b, n_cls, hs, hs)
    wh = torch.zeros(b, 2, hs, hs)
    mask = torch.zeros(b, 1, hs, hs)
    hy, hx = torch.meshgrid(torch.arange(hs, dtype=torch.float32), torch.arange(hs, dtype=torch.float32),
                            indexing="ij")
    lo, hi = n_obj_range
    smin, smax = size_range if size_range is not None else (4, s // 3)
    for i in range(b):
        n = int(torch.randint(lo, hi + 1, (1,), generator=g))
        for _ in range(n):
            k = int(torch.randint(0, n_cls, (1,), generator=g))
            w = int(torch.randint(smin, smax, (1,), generator=g))
            h = int(torch.randint(smin, smax, (1,), generator=g))
            x0 = int(torch.randint(0, s - w, (1,), generator=g))
            y0 = int(torch.randint(0, s - h, (1,), generator=g))
            img[i, :, y0:y0 + h, x0:x0 + w] = colors[k].view(3, 1, 1) + 0.2 * torch.randn(3, h, w, generator=g)
            cy, cx = (y0 + h / 2.0) / 2.0, (x0 + w / 2.0) / 2.0
            iy, ix = min(int(cy), hs - 1), min(int(cx), hs - 1)
            sigma = max(0.5, min(w, h) / 6.0)  # in heatmap pixels (stride 2)
            gauss = torch.exp(-((hy - iy) ** 2 + (hx - ix) ** 2) / (2 * sigma ** 2))
            hm[i, k] = torch.maximum(hm[i, k], gauss)
            wh[i, 0, iy, ix], wh[i, 1, iy, ix] = float(w), float(h)
            mask[i, 0, iy, ix] = 1.0
    return img, {"hm": hm, "wh": wh, "mask": mask}


def _focal(logits, gt):
    pred = torch.clamp(torch.sigmoid(logits), min=1e-4, max=1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1.0 - pos
    neg_w = torch.pow(1 - gt, 4)
    pos_loss = (torch.log(pred) * torch.pow(1 - pred, 2) * pos).sum()
    neg_loss = (torch.log(1 - pred) * torch.pow(pred, 2) * neg_w * neg).sum()
    num_pos = pos.sum()
    if num_pos == 0:
        return -neg_loss
    return -(pos_loss + neg_loss) / num_pos


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5300 + seed)
    s = [32, 40, 48][seed % 3]
    c = [12, 16, 10][(seed // 3) % 3]
    n_cls = [2, 3][seed % 2]
    b = [4, 6, 8][(seed + 1) % 3]
    base_lr = [2e-3, 1.5e-3, 2.5e-3][seed % 3]
    steps = 180
    warmup = 10
    decay_at = int(steps * (0.7 + 0.05 * (seed % 3)))
    # a few "close-up" batches (very large objects) at seed-dependent steps
    closeup_steps = {40 + 17 * (seed % 5), 95 + 11 * (seed % 4), 140 + 7 * (seed % 3)}

    colors = torch.randn(n_cls, 3, generator=g)
    colors = 1.5 * colors / colors.norm(dim=1, keepdim=True)
    model = FPNCenterNet(c, n_cls)
    opt = torch.optim.Adam(model.parameters(), lr=base_lr)
    state = {"t": 0}

    def schedule(optimizer, args, kwargs):
        t = state["t"]
        lr = base_lr * min(1.0, (t + 1) / warmup) * (0.1 if t >= decay_at else 1.0)
        for grp in optimizer.param_groups:
            grp["lr"] = lr
        state["t"] = t + 1

    opt.register_step_pre_hook(schedule)

    batches = []
    for t in range(steps):
        if t in closeup_steps:
            # close-up frames: one or two objects 2-3x larger than anything seen so far
            batches.append(_batch(g, b, s, n_cls, (1, 2), colors, size_range=(s // 2, int(0.8 * s))))
        else:
            batches.append(_batch(g, b, s, n_cls, (1, 4), colors))

    def loss_fn(out, tgt):
        hm_logits, wh_pred = out
        m = tgt["mask"]
        wh_loss = (F.l1_loss(wh_pred * m, tgt["wh"] * m, reduction="sum") / (m.sum() + 1e-4))
        return _focal(hm_logits, tgt["hm"]) + 0.1 * wh_loss

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
