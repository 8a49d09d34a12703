"""Integral / soft-argmax keypoint regressor (DSNT-style): a fully convolutional net produces one
heatmap per keypoint, a spatial softmax turns it into a probability map and the keypoint is the
expected (x, y) under that map, trained with SGD + momentum and an L1 loss on normalised
coordinates. The sharpening factor beta = 1e4 was taken from a pipeline whose heatmaps are
normalised probability maps (values ~1e-3), but here softmax(beta * H) is applied to raw conv
logits that differ by ~0.01-1 between pixels, so the softmax inputs differ by 1e2-1e4: the spatial
softmax is saturated (one-hot in fp32, or split over exactly tied pixels), its Jacobian
p_i (delta_ij - p_j) is 0 almost everywhere, and practically no gradient reaches the heatmap net. The predicted keypoint sits on whichever pixel wins the arg-max
and the L1 loss wanders at its initial level with no NaN (silent stall). Fixed: beta = 10, i.e.
1000x smaller softmax pre-activations."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "spatial_softmax"
SOURCE = "Integral human pose regression (Sun et al. 2018) / DSNT (Nibali et al. 2018) soft-argmax; a too-large beta/inverse temperature turns the spatial softmax into a hard arg-max with zero gradient"


class SpatialSoftArgmax(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, heat):                       # (B, K, H, W)
        B, K, H, W = heat.shape
        p = F.softmax(heat.flatten(2) * self.beta, dim=-1).view(B, K, H, W)
        xs = torch.linspace(-1, 1, W, device=heat.device)
        ys = torch.linspace(-1, 1, H, device=heat.device)
        x = (p.sum(2) * xs).sum(-1)
        y = (p.sum(3) * ys).sum(-1)
        return torch.stack([x, y], -1)             # (B, K, 2)


class KeypointNet(nn.Module):
    def __init__(self, width, n_kp, beta):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(width, width, 3, padding=2, dilation=2), nn.ReLU(),
                                      nn.Conv2d(width, width, 3, padding=4, dilation=4), nn.ReLU())
        self.heatmap = nn.Conv2d(width, n_kp, 1)
        self.spatial_softmax = SpatialSoftArgmax(beta)

    def forward(self, img):
        return self.spatial_softmax(self.heatmap(self.backbone(img)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(21000 + seed)
    width = [16, 24, 20][seed % 3]
    n_kp = [2, 1, 3][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = [100, 80, 120][seed % 3]
    S = 16
    grid = torch.linspace(-1, 1, S)
    def make(n):
        img = 0.1 * torch.rand(n, 1, S, S, generator=g)
        kp = torch.randint(1, S - 1, (n, n_kp, 2), generator=g)   # (col, row)
        for i in range(n):
            for k in range(n_kp):
                c, r = kp[i, k].tolist()
                img[i, 0, r - 1:r + 2, c - 1:c + 2] += 0.4 + 0.3 * k
        return img, torch.stack([grid[kp[..., 0]], grid[kp[..., 1]]], -1)
    pool = [make(bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    model = KeypointNet(width, n_kp, beta=10.0 if fixed else 1e4)
    opt = torch.optim.SGD(model.parameters(), lr=[0.1, 0.15, 0.1][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.l1_loss(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
