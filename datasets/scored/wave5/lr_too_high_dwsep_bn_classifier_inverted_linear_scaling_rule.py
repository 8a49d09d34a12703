"""MobileNet-style classifier (depthwise-separable conv blocks with BatchNorm, dict output with
'logits' and a pooled 'embedding') trained with SGD + Nesterov. The recipe gives lr 0.5 for a
reference batch of 256 and says to apply the linear scaling rule lr = base * batch / 256; the
training script computed base * 256 / batch instead, so at batch 32 the run uses lr 4.0 instead of
0.0625 (64x too high). BatchNorm keeps the conv stack scale-free, but the classifier layer and the
BN affine parameters take updates far larger than their own magnitude: the logits overshoot from one
class to another every few steps and the cross-entropy thrashes between ~2 and ~8, ending above its
starting value of ln 6 (no NaN; update/weight ratios ~1 instead of ~1e-3). Fix: the correctly scaled lr (0.0625)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goyal et al. 2017 'Accurate, Large Minibatch SGD' linear scaling rule; reports of diverging "
          "runs after inverting the batch-size ratio when porting a recipe to a smaller batch")

BASE_LR, REF_BATCH, BATCH = 0.5, 256, 32


def dwsep(cin, cout, stride):
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU6(),
        nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU6(),
    )


class MobileNetTiny(nn.Module):
    def __init__(self, n_class=6):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.blocks = nn.Sequential(dwsep(16, 32, 1), dwsep(32, 48, 2), dwsep(48, 64, 1))
        self.classifier = nn.Linear(64, n_class)

    def forward(self, x):
        emb = F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1)
        return {"logits": self.classifier(emb), "embedding": emb}


def _shapes(g, n, S=24):
    """Six classes: {square, disk, cross} x {warm, cool} colour, on noisy backgrounds."""
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    labels = torch.randint(0, 6, (n,), generator=g)
    imgs = 0.25 * torch.randn(n, 3, S, S, generator=g)
    for i in range(n):
        shape, col = int(labels[i]) % 3, int(labels[i]) // 3
        cy, cx = (6 + torch.rand(2, generator=g) * 12).tolist()
        r = 3 + 3 * float(torch.rand(1, generator=g))
        if shape == 0:
            m = ((yy - cy).abs() < r) & ((xx - cx).abs() < r)
        elif shape == 1:
            m = ((yy - cy) ** 2 + (xx - cx) ** 2) < r ** 2
        else:
            m = (((yy - cy).abs() < 1.2) & ((xx - cx).abs() < r + 1)) | (((xx - cx).abs() < 1.2) & ((yy - cy).abs() < r + 1))
        colour = torch.tensor([1.0, 0.4, -0.6]) if col == 0 else torch.tensor([-0.6, 0.3, 1.0])
        imgs[i][:, m] += colour[:, None]
    return imgs, labels


def loss_fn(out, y):
    return F.cross_entropy(out["logits"], y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MobileNetTiny()
    imgs, labels = _shapes(g, 384)
    steps = 100
    batches = []
    for s in range(steps):
        idx = torch.randint(0, imgs.shape[0], (BATCH,), generator=g)
        batches.append((imgs[idx], labels[idx]))
    lr = BASE_LR * BATCH / REF_BATCH if fixed else BASE_LR * REF_BATCH / BATCH
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=4e-5)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
