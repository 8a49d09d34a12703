"""SRCNN (9-5-5 conv, ReLU) trained for 2x super-resolution with MSE on [0,1] patches. The original
recipe uses SGD with lr 1e-4 (and 1e-5 for the last layer); here a global SGD+Nesterov-momentum lr of
the order of 0.3-0.8 copied from an ImageNet classification recipe is used. With summed-over-channels
MSE on upsampled patches the first updates overshoot, the update/weight ratio is far above 1e-3, the
reconstruction error blows up and the loss overflows to inf/NaN within a few dozen steps. Fix: the
small SR learning rate."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "SRCNN (Dong et al. 2014) re-trained with a classification-recipe SGD lr; common 'SRCNN loss goes NaN' forum reports"

class SRCNN(nn.Module):
    def __init__(self, f1, f2):
        super().__init__()
        self.patch = nn.Conv2d(3, f1, 9, padding=4)
        self.map = nn.Conv2d(f1, f2, 5, padding=2)
        self.recon = nn.Conv2d(f2, 3, 5, padding=2)
    def forward(self, x):
        x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return self.recon(F.relu(self.map(F.relu(self.patch(x)))))

def _images(g, n, s):
    # smooth random images: low-frequency noise upsampled + edges
    base = torch.rand(n, 3, s // 4, s // 4, generator=g)
    img = F.interpolate(base, size=(s, s), mode="bicubic", align_corners=False)
    edges = (torch.rand(n, 1, s, s, generator=g) > 0.97).float()
    return (0.8 * img + 0.2 * edges).clamp(0, 1)

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    cfg = [dict(f1=16, f2=8, bs=8, s=24, lr=0.5, steps=80),
           dict(f1=24, f2=12, bs=4, s=32, lr=0.3, steps=60),
           dict(f1=12, f2=6, bs=12, s=20, lr=0.8, steps=100)][seed % 3]
    lr = 0.003 if fixed else cfg["lr"]
    data = []
    for _ in range(6):
        hr = _images(g, cfg["bs"], cfg["s"])
        lr_img = F.avg_pool2d(hr, 2)
        data.append((lr_img, hr))
    batches = [data[i % len(data)] for i in range(cfg["steps"])]
    model = SRCNN(cfg["f1"], cfg["f2"])
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    loss_fn = lambda out, y: F.mse_loss(out, y, reduction="sum") / out.shape[0] / 100.0
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
