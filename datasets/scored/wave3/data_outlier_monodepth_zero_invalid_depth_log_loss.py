"""Small encoder-decoder CNN for monocular depth estimation trained with the scale-invariant log
loss (Eigen et al.) on dense synthetic depth maps in metres. Most ground-truth frames are dense and
valid, but one corrupt frame from the loader (a LiDAR projection that failed, stored with 0 = "no
return" over a large region) arrives mid-training with no validity mask applied. log(0) = -inf in
the target makes the loss -inf/NaN at that step and the NaN gradients poison every weight, so all
later losses are NaN. ORIGIN is None: the fault is in the data, not in a layer. Fix: drop/mask the
invalid pixels of that frame (filter the batch)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "KITTI/NYU depth loaders where missing depth is encoded as 0 and log-depth losses go NaN without a validity mask"

class DepthNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.enc1 = nn.Conv2d(3, c, 3, stride=2, padding=1)
        self.enc2 = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.dec1 = nn.Conv2d(2 * c, c, 3, padding=1)
        self.dec2 = nn.Conv2d(c, 1, 3, padding=1)
    def forward(self, x):
        h = F.relu(self.enc1(x)); h = F.relu(self.enc2(h))
        h = F.interpolate(h, scale_factor=2, mode="nearest"); h = F.relu(self.dec1(h))
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return F.softplus(self.dec2(h)) + 0.1   # depth in metres, > 0

def silog(pred, gt):
    d = torch.log(pred) - torch.log(gt)
    return (d ** 2).mean() - 0.85 * d.mean() ** 2

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    cfg = [dict(c=12, bs=6, s=24, lr=2e-3, steps=80, bad=37),
           dict(c=16, bs=4, s=32, lr=1e-3, steps=100, bad=58),
           dict(c=8, bs=8, s=16, lr=3e-3, steps=60, bad=21)][seed % 3]
    s = cfg["s"]
    yy = torch.linspace(0, 1, s).view(1, 1, s, 1).expand(1, 1, s, s)
    def batch():
        slope = 2 + 8 * torch.rand(cfg["bs"], 1, 1, 1, generator=g)
        depth = 1.0 + slope * (1 - yy)                       # ground plane: near at bottom
        img = torch.cat([depth / 10, 1 - depth / 10, torch.rand(cfg["bs"], 1, s, s, generator=g) * 0.1], 1)
        img = img + 0.05 * torch.randn(img.shape, generator=g)
        return img, depth
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    x, y = batches[cfg["bad"]]
    y = y.clone()
    if not fixed:
        y[0, :, : s // 2, :] = 0.0        # failed LiDAR projection: 0 = no return
    # fixed: the corrupt frame is filtered out of the batch
    batches[cfg["bad"]] = (x, y) if not fixed else (x[1:], y[1:])
    model = DepthNet(cfg["c"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=silog, batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
