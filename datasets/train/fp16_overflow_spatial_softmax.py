"""Keypoint regressor (conv features -> hand-written spatial softmax -> linear) under float16 autocast.

The SpatialSoftmax layer normalises each feature map by hand: e = f.exp(); p = e / e.sum().
To localise the blob precisely the conv logits at the peak keep growing; once one passes ~11.09
the float16 exp overflows to inf, the sum is inf too and inf / inf = NaN, so the first
non-finite tensor leaving any module is the NaN output of `keypoints` (a mid-run failure).
fixed=True: the same layer upcasts the logits and computes exp / normalisation in float32.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "keypoints"
SOURCE = ("spatial-softmax keypoint layer (Levine et al. 2016, deep spatial autoencoders) written as "
          "exp(x)/sum(exp(x)) without max-subtraction and trained with AMP; the known pattern of a custom "
          "softmax going NaN in fp16 because exp(x) > 65504 for x > 11.09 and inf/inf = NaN")


class SpatialSoftmax(nn.Module):
    def __init__(self, size, fp32=False):
        super().__init__()
        c = torch.linspace(-1.0, 1.0, size)
        yy, xx = torch.meshgrid(c, c, indexing="ij")
        self.register_buffer("grid", torch.stack([xx.flatten(), yy.flatten()], dim=-1))
        self.fp32 = fp32

    def forward(self, f):                       # f: (B, K, H, W)
        f = f.flatten(2)                        # float16 under autocast
        if self.fp32:
            f = f.float()
        e = f.exp()
        p = e / e.sum(dim=-1, keepdim=True)
        return (p @ self.grid.to(p.dtype)).flatten(1)   # expected (x, y) per keypoint map


class KeypointNet(nn.Module):
    def __init__(self, size, k=4, fixed=False):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, k, 1))
        self.keypoints = SpatialSoftmax(size, fp32=fixed)
        self.head = nn.Linear(2 * k, 2)

    def forward(self, img):
        return self.head(self.keypoints(self.features(img)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    size, bs, steps, noise = 16, 32, 160, 0.2
    c = torch.linspace(-1.0, 1.0, size)
    batches = []
    for _ in range(steps):
        xy = torch.rand(bs, 2, generator=g) * 1.6 - 0.8
        gx = torch.exp(-(c[None, :] - xy[:, 0, None]) ** 2 / 0.02)
        gy = torch.exp(-(c[None, :] - xy[:, 1, None]) ** 2 / 0.02)
        img = (gy[:, :, None] * gx[:, None, :])[:, None] + noise * torch.randn(bs, 1, size, size, generator=g)
        batches.append((img, xy))
    model = KeypointNet(size, fixed=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=4e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
