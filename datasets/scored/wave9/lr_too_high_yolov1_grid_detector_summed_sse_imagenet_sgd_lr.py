"""YOLOv1-style grid detector (LeakyReLU darknet-ish backbone without BatchNorm, per-cell
objectness + box + class regression with the original sum-squared-error loss, lambda_coord=5,
lambda_noobj=0.5, summed over cells and divided by the batch size).  The training script was
adapted from the backbone's ImageNet classification script and kept its momentum-SGD lr=0.1; but
YOLO's SSE is summed over all cells and outputs rather than averaged like a cross-entropy, so its
gradients are many times larger and the same lr overshoots: the loss first drops, then the
updates (update/weight ratios far above 1e-3) throw the weights out of the basin, the raw class
outputs explode and the loss reaches inf/NaN within roughly ten to twenty iterations.  The fix is the lr the
YOLO paper actually used for this loss (1e-2)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Redmon et al. 2016 (YOLO) sec. 2.2 (sum-squared error, lr 1e-2; 'if we start at a high "
          "learning rate our model often diverges due to unstable gradients'); YOLOv1 re-implementation "
          "issues 'loss becomes nan' with classification-recipe lr")


class TinyYOLO(nn.Module):
    def __init__(self, c=16, n_cls=3):
        super().__init__()
        a = lambda: nn.LeakyReLU(0.1)
        self.features = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1), a(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1), a(), nn.MaxPool2d(2),
            nn.Conv2d(2 * c, 2 * c, 3, padding=1), a(), nn.MaxPool2d(2))
        self.detect = nn.Conv2d(2 * c, 5 + n_cls, 1)

    def forward(self, x):
        p = self.detect(self.features(x))          # (B, 5+C, S, S)
        return {"obj": torch.sigmoid(p[:, 0]), "box": torch.sigmoid(p[:, 1:5]), "cls": p[:, 5:]}


def _scenes(g, n, size=32, S=4, n_cls=3):
    cell = size / S
    ys, xs = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    imgs = []; obj = torch.zeros(n, S, S); box = torch.zeros(n, 4, S, S); cls = torch.zeros(n, S, S, dtype=torch.long)
    palette = torch.tensor([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])
    for i in range(n):
        img = 0.2 * torch.randn(3, size, size, generator=g)
        for _ in range(2):
            w, h = 6 + 12 * torch.rand(2, generator=g)
            cx, cy = w / 2 + torch.rand((), generator=g) * (size - w), h / 2 + torch.rand((), generator=g) * (size - h)
            k = int(torch.randint(0, n_cls, (1,), generator=g))
            inside = ((xs - cx).abs() < w / 2) & ((ys - cy).abs() < h / 2)
            img = torch.where(inside, palette[k][:, None, None].expand(3, size, size), img)
            gi, gj = min(int(cx // cell), S - 1), min(int(cy // cell), S - 1)
            obj[i, gj, gi] = 1.0; cls[i, gj, gi] = k
            box[i, :, gj, gi] = torch.stack([cx / cell - gi, cy / cell - gj, (w / size).sqrt(), (h / size).sqrt()]).flatten()
        imgs.append(img)
    return torch.stack(imgs), {"obj": obj, "box": box, "cls": cls}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyYOLO()
    pool = [_scenes(g, 16) for _ in range(10)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, y):
        B = y["obj"].shape[0]
        m = y["obj"]
        coord = 5.0 * ((out["box"] - y["box"]) ** 2).sum(1).mul(m).sum()
        conf = ((out["obj"] - m) ** 2 * m).sum() + 0.5 * ((out["obj"] - m) ** 2 * (1 - m)).sum()
        onehot = F.one_hot(y["cls"], out["cls"].shape[1]).permute(0, 3, 1, 2).float()
        cls = ((out["cls"] - onehot) ** 2).sum(1).mul(m).sum()
        return (coord + conf + cls) / B

    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 0.1, momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
