"""FCN-style semantic segmentation net (conv-ReLU encoder, 1x1 score layer, bilinear upsampling)
trained with the Caffe FCN recipe's *unnormalised* loss (SoftmaxWithLoss, normalize: false:
cross-entropy summed over every pixel of the batch) but with the ordinary SGD learning rate of
a mean-reduced loss (3e-4, momentum 0.9) instead of the FCN paper's 1e-10-scale rate. The summed
loss makes the first gradients thousands of times larger than a per-pixel mean; the first couple
of momentum steps throw the conv biases of the ReLU layers far negative, every ReLU of the
encoder outputs 0 for every pixel, no gradient reaches the conv weights again and the score layer
can only learn the class prior through its bias: the loss sits on a plateau and never becomes
non-finite. Fix: the learning rate matched to the summed loss (0.05 / pixels per batch)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.0"
SOURCE = ("Long et al. FCN (Caffe solver: SoftmaxWithLoss normalize: false, base_lr 1e-10 / 1e-12); "
          "many reports of FCN ports whose loss is stuck at a constant with all-background predictions "
          "after copying the loss but not the learning rate (dying ReLU in the encoder)")

N_CLASSES = 3


class FCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(inplace=True),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(inplace=True),
        )
        self.score = nn.Conv2d(32, N_CLASSES, 1)
        nn.init.zeros_(self.score.weight)          # FCN: score layers are zero-initialised
        nn.init.zeros_(self.score.bias)

    def forward(self, x):
        s = self.score(self.features(x))
        return F.interpolate(s, size=x.shape[-2:], mode="bilinear", align_corners=False)


def _batch(g, n, H=32):
    yy, xx = torch.meshgrid(torch.arange(H), torch.arange(H), indexing="ij")
    imgs, masks = [], []
    for _ in range(n):
        img = 0.4 + 0.1 * torch.rand(3, 1, 1, generator=g) + 0.05 * torch.randn(3, H, H, generator=g)
        mask = torch.zeros(H, H, dtype=torch.long)
        for c in (1, 2):
            cx, cy = torch.randint(8, H - 8, (2,), generator=g)
            r = int(torch.randint(8, 12, (1,), generator=g))
            if c == 1:
                m = ((xx - cx) ** 2 + (yy - cy) ** 2) < r * r          # discs
            else:
                m = ((xx - cx).abs() < r) & ((yy - cy).abs() < r)      # squares
            col = torch.tensor([0.9, 0.2, 0.2]) if c == 1 else torch.tensor([0.2, 0.3, 0.9])
            img = torch.where(m[None], col.view(3, 1, 1) + 0.05 * torch.randn(3, H, H, generator=g), img)
            mask[m] = c
        imgs.append(img); masks.append(mask)
    return torch.stack(imgs), torch.stack(masks)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FCN()
    pixels = 8 * 32 * 32
    lr = 0.05 / pixels if fixed else 3e-4
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    pool = [_batch(g, 8) for _ in range(20)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(logits, mask):
        return F.cross_entropy(logits, mask, reduction="sum")       # normalize: false

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
