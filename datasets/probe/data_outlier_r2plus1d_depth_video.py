"""R(2+1)D-style action classifier (factorised spatial 1x3x3 + temporal 3x1x1 Conv3d blocks, AdamW)
on short depth-camera clips: a hand in front of the sensor moves towards/away from it at a
class-specific rate.  The depth frames are float metres as published by the camera driver, where
invalid returns (reflective / out-of-range surfaces) are NaN.  The dataset was cleaned, but one
clip mid-run still carries a patch of NaN depth: its batch gives a NaN loss, NaN gradients flow
into every weight through AdamW and the whole run stays NaN.  fixed=True: the loader drops clips
with non-finite pixels, so that batch is one clip shorter (everything else identical)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("R(2+1)D (Tran et al. 2018) on depth video (NTU RGB+D / RealSense-style float depth with NaN for "
          "invalid pixels); recurrent PyTorch-forum reports 'loss becomes nan after N iterations' traced "
          "to a few depth frames with NaN holes")

T, H, W, NCLS = 8, 16, 16, 4


class R2Plus1DBlock(nn.Module):
    def __init__(self, cin, cout, mid, stride):
        super().__init__()
        self.spatial = nn.Conv3d(cin, mid, (1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1))
        self.temporal = nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0))

    def forward(self, x):
        return F.relu(self.temporal(F.relu(self.spatial(x))))


class R2Plus1DNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = R2Plus1DBlock(1, 16, 24, 1)
        self.layer1 = R2Plus1DBlock(16, 32, 32, 2)
        self.layer2 = R2Plus1DBlock(32, 48, 48, 2)
        self.fc = nn.Linear(48, NCLS)
        for m in self.modules():  # torchvision VideoResNet init
            if isinstance(m, nn.Conv3d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, depth):  # (B, 1, T, H, W) depth in metres
        x = (depth - 2.0) / 0.5  # dataset depth mean / std
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(x.mean(dim=(2, 3, 4)))


def _clip(gen, label):
    """Depth clip: wall at ~2.4 m, a hand blob whose distance oscillates at a class-specific rate."""
    yy, xx = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(W, dtype=torch.float32),
                            indexing="ij")
    cy, cx = 4 + 8 * torch.rand(2, generator=gen)
    freq = [0.0, 1.0, 2.0, 3.5][label] + 0.2 * torch.rand(1, generator=gen).item()
    phase = 6.2832 * torch.rand(1, generator=gen).item()
    blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 18.0)
    t = torch.arange(T, dtype=torch.float32)
    dist = 1.0 - 0.45 * torch.cos(6.2832 * freq * t / T + phase)   # how far the hand comes forward
    depth = 2.4 - dist.view(T, 1, 1) * blob + 0.04 * torch.randn(T, H, W, generator=gen)
    return depth.unsqueeze(0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = R2Plus1DNet()
    gen = torch.Generator().manual_seed(seed)
    steps, bs = 120, 16
    bad_step = 30 + int(torch.randint(0, 40, (1,), generator=gen))
    batches = []
    for s in range(steps):
        ys = torch.randint(0, NCLS, (bs,), generator=gen)
        xs = torch.stack([_clip(gen, int(c)) for c in ys])
        if s == bad_step:
            j = int(torch.randint(0, bs, (1,), generator=gen))
            t0, y0, x0 = [int(v) for v in torch.randint(0, 10, (3,), generator=gen)]
            xs[j, 0, t0 % T: t0 % T + 3, y0:y0 + 5, x0:x0 + 4] = float("nan")  # invalid-depth hole
            if fixed:  # loader check: drop clips with non-finite depth
                keep = torch.isfinite(xs).flatten(1).all(1)
                xs, ys = xs[keep], ys[keep]
        batches.append((xs, ys))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
