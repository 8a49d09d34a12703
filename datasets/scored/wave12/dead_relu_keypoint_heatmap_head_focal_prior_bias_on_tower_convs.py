"""Bottom-up keypoint detector with a CenterNet/CornerNet-style heatmap head (conv tower of two
ReLU convs, then a 1x1 conv to per-joint heatmap logits) trained with the penalty-reduced pixel
focal loss. The RetinaNet/CenterNet recipe initialises the head's convs with N(0, 0.01) and sets
only the LAST conv's bias to -log((1 - pi) / pi) = -4.6 so that the initial foreground
probability is pi = 0.01. Here the init helper loops over every Conv2d of the head and applies
the prior bias to all of them: the tower convs start with weights ~0.01 and bias -4.6, so their
pre-activations are about -4.6 at every pixel and every ReLU in head.tower is dead at step 0.
No gradient reaches the tower or the backbone; only the final bias can move, the predicted
heatmap is spatially constant and the focal loss plateaus (no NaN). Restricting the prior bias
to the final conv, as in the reference code, trains."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.tower.1"
SOURCE = ("torchvision RetinaNetClassificationHead / CenterNet init: prior bias -log((1-pi)/pi) on "
          "the final logits conv only; refactors that apply it to every conv of the head")

HM, J = 16, 3


class KeypointHeatmapNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 24, 3, padding=1), nn.BatchNorm2d(24), nn.ReLU(),
        )
        self.head = nn.Module()
        self.head.tower = nn.Sequential(
            nn.Conv2d(24, 24, 3, padding=1), nn.ReLU(),
            nn.Conv2d(24, 24, 3, padding=1), nn.ReLU(),
        )
        self.head.logits = nn.Conv2d(24, J, 1)

    def forward(self, x):
        return self.head.logits(self.head.tower(self.backbone(x)))


def _init_head(model, fixed, prior=0.01):
    bias_value = -math.log((1 - prior) / prior)
    for name, m in model.head.named_modules():
        if isinstance(m, nn.Conv2d):
            nn.init.normal_(m.weight, std=0.01)
            if fixed and m is not model.head.logits:
                nn.init.constant_(m.bias, 0.0)
            else:
                nn.init.constant_(m.bias, bias_value)     # the bug: prior bias on the tower too


def _batch(g, n=8):
    ys, xs = torch.meshgrid(torch.arange(HM, dtype=torch.float32), torch.arange(HM, dtype=torch.float32), indexing="ij")
    img = 0.1 * torch.randn(n, 3, HM, HM, generator=g)
    hm = torch.zeros(n, J, HM, HM)
    for i in range(n):
        for j in range(J):
            cx, cy = torch.randint(2, HM - 2, (2,), generator=g).tolist()
            gauss = torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * 1.0 ** 2))
            hm[i, j] = torch.maximum(hm[i, j], gauss)
            img[i, j] += gauss * 1.5
    return img, hm


def focal_loss(logits, gt, alpha=2, beta=4):
    # CenterNet penalty-reduced pixel-wise focal loss
    pred = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(pred) * (1 - pred) ** alpha * pos
    neg_loss = torch.log(1 - pred) * pred ** alpha * (1 - gt) ** beta * neg
    num_pos = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / num_pos


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = KeypointHeatmapNet()
    _init_head(model, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = 150
    batches = [_batch(g) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=focal_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
