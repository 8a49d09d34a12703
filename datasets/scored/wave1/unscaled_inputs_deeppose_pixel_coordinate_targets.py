"""DeepPose-style direct keypoint regression (small CNN -> global pooling -> FC -> 2 x 4 keypoint
coordinates, MSE loss) where the targets are the keypoints in ORIGINAL image pixels (0-256) while
the network sees a 32x32 downsampled crop; DeepPose normalises the coordinates to the box ([-0.5,
0.5]), this code does not. The initial outputs are ~0, so the per-coordinate error is ~100 px and
the MSE starts around 1e4; the gradient on the FC layer is a few hundred times larger than for
normalised targets and SGD + momentum (lr = 0.02, a standard value for a normalised regression
head) overshoots on the very first steps: the FC weights and ReLU features blow up and the loss
explodes to inf/NaN within the first handful of steps. The fixed run divides the target
coordinates by the image size (256) so they lie in [0, 1] -- the only change.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "fc"
SOURCE = ('Toshev & Szegedy 2014 DeepPose (coordinates normalised to the box); known pattern: keypoint '
          'regression on raw pixel coordinates')

NK, S, ORIG = 4, 32, 256.0


class PoseRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Linear(32 * 4, 2 * NK)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def _make_batch(g, n, normalise):
    ii = torch.arange(S).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    imgs = 0.05 * torch.randn(n, 1, S, S, generator=g)
    kps = torch.zeros(n, 2 * NK)
    for i in range(n):
        c = torch.rand(2, generator=g) * 14 + 9
        r = float(torch.rand(1, generator=g)) * 3 + 4
        ang = float(torch.rand(1, generator=g)) * 1.5
        pts = []
        for k in range(NK):
            a = torch.tensor(ang + k * 1.5708)
            p = c + r * torch.stack([torch.cos(a), torch.sin(a)])
            imgs[i, 0] += torch.exp(-((xx - p[0]) ** 2 + (yy - p[1]) ** 2) / 2.0) * (0.5 + 0.2 * k)
            pts.append(p * (ORIG / S))                      # original-image pixel coordinates
        kps[i] = torch.cat(pts)
    return imgs, (kps / ORIG if normalise else kps)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 16, normalise=fixed) for _ in range(10)]
    model = PoseRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
