"""FSRCNN (feature extraction -> shrink -> mapping -> expand -> ConvTranspose2d upsampler, PReLU)
for 2x super-resolution, trained with plain SGD+momentum on [0,1] float patches. One cached batch
was written by a different preprocessing path that forgot the /255, so a single mid-run batch has
LR inputs and HR targets in [0,255]. The MSE on that batch is ~65000x larger than usual; its gradient
makes one gigantic SGD step that throws the weights far out, after which the loss on normal batches
explodes to inf/NaN (or sits orders of magnitude above where it was). ORIGIN is the first layer that
reads the corrupt batch (`extract`). Fix: drop/renormalise the bad batch."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "extract"
SOURCE = "super-resolution data pipelines mixing uint8 and float caches (missing /255 in one shard)"

class FSRCNN(nn.Module):
    def __init__(self, d, s, m):
        super().__init__()
        self.extract = nn.Conv2d(3, d, 5, padding=2)
        self.shrink = nn.Conv2d(d, s, 1)
        self.mapping = nn.Sequential(*[nn.Conv2d(s, s, 3, padding=1) for _ in range(m)])
        self.expand = nn.Conv2d(s, d, 1)
        self.upsample = nn.ConvTranspose2d(d, 3, 9, stride=2, padding=4, output_padding=1)
        self.act = nn.PReLU()
    def forward(self, x):
        h = self.act(self.extract(x)); h = self.act(self.shrink(h))
        for conv in self.mapping:
            h = self.act(conv(h))
        return self.upsample(self.act(self.expand(h)))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    cfg = [dict(d=16, s=8, m=2, bs=8, p=24, lr=0.003, steps=100, bad=42),
           dict(d=20, s=6, m=3, bs=6, p=20, lr=0.005, steps=120, bad=67),
           dict(d=12, s=8, m=1, bs=10, p=28, lr=0.004, steps=80, bad=25)][seed % 3]
    def batch():
        base = torch.rand(cfg["bs"], 3, cfg["p"] // 4, cfg["p"] // 4, generator=g)
        hr = F.interpolate(base, size=(cfg["p"], cfg["p"]), mode="bicubic", align_corners=False).clamp(0, 1)
        return F.avg_pool2d(hr, 2), hr
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    x, y = batch()
    if not fixed:
        x, y = (x * 255).round(), (y * 255).round()   # shard written without the /255
    batches[cfg["bad"]] = (x, y)
    model = FSRCNN(cfg["d"], cfg["s"], cfg["m"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    loss_fn = lambda out, y: F.mse_loss(out, y) * 10.0
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
