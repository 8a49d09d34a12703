"""Tiny FCOS-style anchor-free detector: a two-layer conv tower over a 1x20x20 image, a per-pixel
objectness logit (BCE) and a per-pixel box regression that predicts the distances to the four box
sides as exp(conv) (the FCOS/UnitBox parameterisation), regressed with an L1 loss in pixel units on
the pixels inside the ground-truth box. It is optimised with Nesterov SGD at lr=0.1, the value of
the ImageNet classifier recipe the script started from, instead of the ~0.01 such a head tolerates
without warmup. Because the L1 gradient w.r.t. the pre-activation is sign * exp(pre-activation), an
overshooting step that enlarges a box also enlarges the next gradient: the regression logits run
away and exp() either passes the fp32 limit (inf box, NaN loss and weights), or the overshoots knock
most of the tower's ReLUs dead and the loss keeps oscillating near its starting value for the rest
of the run (a stall without any non-finite value)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("FCOS (Tian et al. 2019) exp() ltrb regression; FCOS/mmdetection issues 'loss becomes NaN "
          "at the start of training' fixed by lowering lr / warmup; ImageNet SGD recipe lr 0.1")

H = W = 20


class FCOSLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.cls_head = nn.Conv2d(16, 1, 3, padding=1)
        self.reg_head = nn.Conv2d(16, 4, 3, padding=1)

    def forward(self, img):
        f = self.tower(img)
        return {"obj": self.cls_head(f).squeeze(1), "ltrb": torch.exp(self.reg_head(f))}


def make_batch(g, B):
    img = 0.1 * torch.randn(B, 1, H, W, generator=g)
    ltrb = torch.zeros(B, 4, H, W)
    pos = torch.zeros(B, H, W)
    ys, xs = torch.meshgrid(torch.arange(H) + 0.5, torch.arange(W) + 0.5, indexing="ij")
    for b in range(B):
        w, h = torch.randint(4, 11, (2,), generator=g).tolist()
        x0 = torch.randint(0, W - w + 1, (1,), generator=g).item()
        y0 = torch.randint(0, H - h + 1, (1,), generator=g).item()
        img[b, 0, y0:y0 + h, x0:x0 + w] += 1.0
        inside = (xs > x0) & (xs < x0 + w) & (ys > y0) & (ys < y0 + h)
        pos[b] = inside.float()
        ltrb[b] = torch.stack([xs - x0, ys - y0, x0 + w - xs, y0 + h - ys]) * inside
    return img, {"obj": pos, "ltrb": ltrb}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    steps, B = 80, 16
    batches = [make_batch(g, B) for _ in range(steps)]
    model = FCOSLite()
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 0.1, momentum=0.9, nesterov=True)

    def loss_fn(out, tgt):
        cls = F.binary_cross_entropy_with_logits(out["obj"], tgt["obj"])
        m = tgt["obj"] > 0
        p = out["ltrb"].permute(0, 2, 3, 1)[m]
        t = tgt["ltrb"].permute(0, 2, 3, 1)[m]
        return cls + F.l1_loss(p, t)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
