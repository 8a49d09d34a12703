"""Healthy: top-down pose estimation with Gaussian keypoint heatmaps and Online Hard Keypoint
Mining (CPN's RefineNet loss): per-keypoint heatmap MSE, but only the top-k hardest keypoints of
each person instance contribute, with invisible keypoints masked out by the target weight.

What a naive monitor might flag: the loss is tiny (heatmap MSE ~1e-3 to 1e-2 per pixel); in
every step the output channels of the keypoints not selected by OHKM, and of the invisible
ones, receive exactly zero gradient, so large parts of the final conv's weight gradient are
exactly zero and the set of "silent" channels changes from step to step; the per-step loss jumps
when the hard set changes.  All of this is by design: the model still learns every keypoint
(each is hard in some steps) and the loss falls well below its starting level.

ORIGIN: None (healthy).  fixed=True builds the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Chen et al., Cascaded Pyramid Network (CVPR 2018) online hard keypoint mining "
          "(top-k of the per-keypoint L2 losses); SimpleBaseline heatmap MSE with target_weight")


class HeatmapNet(nn.Module):
    def __init__(self, width, n_kp):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=2, dilation=2), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=4, dilation=4), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
        self.final = nn.Conv2d(width, n_kp, 1)

    def forward(self, img):
        return self.final(self.body(img))


def make_ohkm_loss(topk):
    def loss_fn(pred, target):
        heat, vis = target                                    # (B, K, H, W), (B, K)
        per_kp = ((pred - heat) ** 2).mean((2, 3)) * vis      # invisible keypoints -> 0
        hard = per_kp.topk(topk, dim=1).values                # online hard keypoint mining
        return hard.mean()
    return loss_fn


def _batch(g, n, n_kp, size, sigma=1.2):
    # a stick figure: keypoints along a random chain; each drawn as a bright dot of its own size
    ys, xs = torch.meshgrid(torch.arange(size, dtype=torch.float32),
                            torch.arange(size, dtype=torch.float32), indexing="ij")
    start = 3 + (size - 6) * torch.rand(n, 2, generator=g)
    steps = torch.randn(n, n_kp, 2, generator=g) * 1.8
    kps = (start[:, None] + torch.cumsum(steps, 1)).clamp(1, size - 2)
    vis = (torch.rand(n, n_kp, generator=g) > 0.15).float()
    d2 = (xs[None, None] - kps[..., 0, None, None]) ** 2 + (ys[None, None] - kps[..., 1, None, None]) ** 2
    heat = torch.exp(-d2 / (2 * sigma ** 2))
    radius = 0.6 + 0.15 * torch.arange(n_kp, dtype=torch.float32)   # identity by dot size
    dots = (torch.exp(-d2 / (2 * radius[None, :, None, None] ** 2)) * vis[..., None, None]).amax(1)
    img = dots + 0.1 * torch.randn(n, size, size, generator=g)
    return img[:, None], (heat, vis)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [24, 32, 16][seed % 3]
    n_kp = [6, 8, 5][seed % 3]
    topk = [3, 4, 2][seed % 3]
    batch = [12, 8, 16][seed % 3]
    lr = [2e-3, 1.5e-3, 2.5e-3][seed % 3]
    steps, size = 250, 16
    model = HeatmapNet(width, n_kp)
    batches = [_batch(g, batch, n_kp, size) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": make_ohkm_loss(topk), "batches": batches,
            "steps": steps}
