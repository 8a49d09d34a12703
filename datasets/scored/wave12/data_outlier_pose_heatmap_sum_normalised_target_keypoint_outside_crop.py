"""2D pose estimation with a SimpleBaseline-style head (conv encoder, transposed-conv decoder, one
heatmap per joint) trained with a heatmap-as-distribution loss: the target Gaussian heatmap is
normalised to sum to 1 and compared with the spatial softmax of the predicted logits by
cross-entropy. The pipeline crops around each person; one sample in the shard is a truncated
person whose wrist annotation lands ~40 px outside the 16x16 crop (COCO keeps such keypoints
with v=1 after the affine crop). Its Gaussian underflows to exactly 0 at every pixel, the
sum-normalisation divides 0 by 0, and that single row's target is NaN: the loss of that batch
is NaN and Adam propagates it into every weight. The fix filters that row out of its batch
(keypoints whose rendered heatmap is empty are dropped), everything else identical."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("SimpleBaseline/HRNet target generation, which sets target_weight=0 for joints outside the "
          "heatmap; known pitfall of sum-normalised (distribution) heatmap targets without that check")

HM = 16
SIGMA = 1.5


class PoseNet(nn.Module):
    def __init__(self, n_joints=4):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        )
        self.deconv = nn.Sequential(
            nn.ConvTranspose2d(32, 32, 4, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        )
        self.final = nn.Conv2d(16, n_joints, 1)

    def forward(self, x):
        return self.final(self.deconv(self.backbone(x)))


def _render(kp):
    # kp: (J, 2) pixel coords in the 16x16 heatmap; returns sum-normalised Gaussians
    ys, xs = torch.meshgrid(torch.arange(HM, dtype=torch.float32), torch.arange(HM, dtype=torch.float32), indexing="ij")
    d2 = (xs[None] - kp[:, 0, None, None]) ** 2 + (ys[None] - kp[:, 1, None, None]) ** 2
    hm = torch.exp(-d2 / (2 * SIGMA ** 2))
    return hm / hm.sum(dim=(1, 2), keepdim=True)


def _sample(g, n_joints=4):
    kp = 2 + torch.rand(n_joints, 2, generator=g) * (HM - 4)
    img = 0.2 * torch.randn(3, HM, HM, generator=g)
    ys, xs = torch.meshgrid(torch.arange(HM, dtype=torch.float32), torch.arange(HM, dtype=torch.float32), indexing="ij")
    for j in range(n_joints):
        blob = torch.exp(-((xs - kp[j, 0]) ** 2 + (ys - kp[j, 1]) ** 2) / 2.0)
        img[j % 3] += blob * (1.0 if j < 3 else -1.0)
    return img, kp


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PoseNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps = 100
    bad_step, bad_row = 30 + seed % 5, 5
    batches = []
    for s in range(steps):
        imgs, hms = [], []
        for r in range(16):
            img, kp = _sample(g)
            if s == bad_step and r == bad_row:
                kp[3] = torch.tensor([-40.0, 7.0])      # truncated person: wrist 40 px left of the crop
            imgs.append(img)
            hms.append(_render(kp))
        x, y = torch.stack(imgs), torch.stack(hms)
        if fixed:
            keep = torch.isfinite(y).flatten(1).all(dim=1)   # drop rows whose rendered target is empty
            x, y = x[keep], y[keep]
        batches.append((x, y))

    def loss_fn(logits, target):
        logp = F.log_softmax(logits.flatten(2), dim=-1)
        return -(target.flatten(2) * logp).sum(-1).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
