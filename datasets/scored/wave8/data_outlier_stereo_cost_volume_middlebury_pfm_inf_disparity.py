"""Small stereo-matching network (GC-Net/PSMNet-like: shared feature tower, SAD cost volume
over 8 disparities, 2-D aggregation over the disparity channels, soft-argmin) trained on a mix of
dense synthetic scenes and a few real scans. The loss masks invalid ground truth with the KITTI
convention `valid = gt > 0`, which is right for KITTI PNGs (0 = no lidar return) but not for
Middlebury PFM files, where unknown / occluded disparities are stored as +inf. The one Middlebury
scan in the shuffled list carries an inf hole; when its batch comes up, inf > 0 passes the mask,
the smooth-L1 of an inf target is inf: the logged loss of that step is inf (and poisons every
epoch average and any loss-based early stopping / LR-on-plateau logic). The data are otherwise fine. Fix: drop the non-finite pixels as well
(valid = isfinite(gt) & (gt > 0)), i.e. filter the corrupt rows."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Middlebury 2014 stereo PFM ground truth encodes unknown disparity as inf; reports of NaN "
          "losses in PSMNet/GwcNet/RAFT-Stereo fine-tuning on Middlebury with the KITTI mask gt > 0")


class StereoNet(nn.Module):
    def __init__(self, maxdisp=8, ch=16):
        super().__init__()
        self.maxdisp = maxdisp
        self.feature = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1),
        )
        self.aggregate = nn.Sequential(
            nn.Conv2d(maxdisp, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, maxdisp, 3, padding=1),
        )
        self.sharpness = nn.Parameter(torch.tensor(1.0))

    def forward(self, left, right):
        fl = torch.cat([left, self.feature(left)], 1)
        fr = torch.cat([right, self.feature(right)], 1)
        vols = []
        for d in range(self.maxdisp):
            shifted = F.pad(fr, (d, 0))[..., : fr.shape[-1]]
            vols.append(-(fl - shifted).abs().mean(1))   # SAD-style matching cost
        cost = torch.stack(vols, 1)
        cost = self.sharpness * cost + self.aggregate(cost)
        prob = torch.softmax(cost, 1)
        disp = (prob * torch.arange(self.maxdisp, dtype=prob.dtype).view(1, -1, 1, 1)).sum(1, keepdim=True)
        return disp


def _scene(g, H=24, W=48, middlebury=False):
    tex = torch.rand(1, 1, H // 2, W // 2 + 8, generator=g)
    tex = F.interpolate(tex, size=(H, W + 16), mode="bilinear", align_corners=False)[0, 0]
    tex = tex + 0.3 * torch.rand(H, W + 16, generator=g)
    disp = torch.full((H, W), float(torch.randint(1, 4, (1,), generator=g)))
    y0, x0 = int(torch.randint(0, H // 2, (1,), generator=g)), int(torch.randint(8, W // 2, (1,), generator=g))
    disp[y0:y0 + H // 2, x0:x0 + W // 3] = float(torch.randint(4, 8, (1,), generator=g))
    xs = torch.arange(W).view(1, W).expand(H, W)
    left = tex.gather(1, xs + 8)
    right = tex.gather(1, xs + 8 + disp.long())        # right(x) = left(x + d): left(x) matches right(x - d)
    if middlebury:
        disp = disp.clone()
        disp[y0:y0 + H // 2, max(x0 - 3, 0):x0] = float("inf")   # occlusion strip: unknown in PFM
    return left[None], right[None], disp[None]


def _batch(g, n, mb_row=None):
    rows = [_scene(g, middlebury=(i == mb_row)) for i in range(n)]
    l = torch.stack([r[0] for r in rows]); r_ = torch.stack([r[1] for r in rows]); d = torch.stack([r[2] for r in rows])
    return (l, r_), d


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = StereoNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 100
    pool = [_batch(g, 8, mb_row=2 if i == 23 else None) for i in range(30)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(pred, gt):
        if fixed:
            valid = torch.isfinite(gt) & (gt > 0)
        else:
            valid = gt > 0                      # KITTI convention
        return F.smooth_l1_loss(pred[valid], gt[valid])

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
