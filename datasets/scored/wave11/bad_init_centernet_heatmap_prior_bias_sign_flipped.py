"""CenterNet-style keypoint detector head: a small conv tower over a 1x24x24 image and a per-pixel
centre-heatmap logit trained with CenterNet's penalty-reduced focal loss (normalised by the number
of objects) on sigmoid outputs clamped to [1e-4, 1 - 1e-4] as in CenterNet's ``_sigmoid``, with SGD
+ momentum. CenterNet initialises the heatmap bias to -2.19 (prior p = 0.1) so the ~570 background
pixels per image start with a small loss. Here the prior is written with the sign flipped (+2.19, p
= 0.9): every background pixel starts confidently positive, the focal loss summed over all of them
and divided by 2-3 objects is ~500, and the first SGD step is correspondingly enormous. It throws
the head's logits far negative for every pixel, the clamp at 1e-4 catches every output, the clamp
passes no gradient, and the loss freezes at exactly -log(1e-4) = 9.21 per object for the rest of the
run: a silent stall, no NaN. With the correct prior the same run trains."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "hm_head"
SOURCE = ("CenterNet (Zhou et al. 2019) heatmap head bias init -2.19 / RetinaNet prior init "
          "b = -log((1 - pi) / pi) (Lin et al. 2017): without it the loss from the many easy negatives "
          "destabilises training")

S = 24


class CenterHead(nn.Module):
    def __init__(self, prior_sign):
        super().__init__()
        self.tower = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.hm_head = nn.Conv2d(32, 1, 1)
        p = 0.1
        nn.init.constant_(self.hm_head.bias, prior_sign * -math.log((1 - p) / p))

    def forward(self, x):
        return self.hm_head(self.tower(x)).squeeze(1)


def make_batch(g, B):
    img = 0.2 * torch.randn(B, 1, S, S, generator=g)
    hm = torch.zeros(B, S, S)
    ys, xs = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    for b in range(B):
        n = int(torch.randint(1, 4, (1,), generator=g))
        for _ in range(n):
            cx, cy = torch.randint(3, S - 3, (2,), generator=g).tolist()
            r = float(torch.randint(2, 4, (1,), generator=g))
            img[b, 0] += torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * r * r))
            hm[b] = torch.maximum(hm[b], torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * (r / 2) ** 2)))
            hm[b, cy, cx] = 1.0
    return img, hm


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    steps, B = 100, 16
    batches = [make_batch(g, B) for _ in range(steps)]
    model = CenterHead(prior_sign=1.0 if fixed else -1.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_fn(logit, hm):
        p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
        pos = hm.eq(1.0).float()
        pos_loss = -((1 - p) ** 2 * torch.log(p) * pos).sum()
        neg_loss = -((1 - hm) ** 4 * p ** 2 * torch.log(1 - p) * (1 - pos)).sum()
        return (pos_loss + neg_loss) / pos.sum().clamp_min(1.0)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
