"""CSRNet-style crowd counter: a small conv front-end, dilated conv back-end and a 1x1 density head;
a `counter` module integrates the density map into a per-image head count. As is common in crowd
counting, the ground-truth density maps are amplified by a factor (x100) so that per-pixel targets
are not tiny. Training runs under float16 autocast without a GradScaler. Dense-crowd images have
several hundred heads, so as the predicted density approaches the amplified targets the
float16 sum in the counter passes 65504 (x100 * 700 heads = 70000) and becomes inf; the count loss is
inf and the backward pass fills the weights with NaN. ORIGIN is the counter, where the float16 inf is
born. Fix: bfloat16 autocast (fp32 exponent range), nothing else changed."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "counter"
SOURCE = "CSRNet / MCNN crowd counting with an L2 count loss under AMP float16; inf loss on dense crowds"

class Counter(nn.Module):
    def forward(self, density):
        return density.sum(dim=(1, 2, 3))

class CrowdNet(nn.Module):
    def __init__(self, c, n_back):
        super().__init__()
        self.front = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                   nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU())
        self.back = nn.Sequential(*[m for _ in range(n_back) for m in
                                    (nn.Conv2d(2 * c, 2 * c, 3, padding=2, dilation=2), nn.ReLU())])
        self.density_head = nn.Conv2d(2 * c, 1, 1)
        self.counter = Counter()
    def forward(self, img):
        d = F.softplus(self.density_head(self.back(self.front(img))))
        return {"density": d, "count": self.counter(d)}

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    cfg = [dict(c=8, nb=2, bs=4, s=48, lr=1e-2, steps=80, heads=(500, 900)),
           dict(c=12, nb=1, bs=6, s=40, lr=5e-3, steps=70, heads=(550, 800)),
           dict(c=6, nb=3, bs=4, s=56, lr=1e-2, steps=100, heads=(400, 900))][seed % 3]
    s = cfg["s"]; h2 = s // 2
    def batch():
        imgs, dens = [], []
        for _ in range(cfg["bs"]):
            n = int(torch.randint(cfg["heads"][0], cfg["heads"][1], (1,), generator=g))
            # crowd occupies a random vertical band; heads are bright blobs
            top = int(torch.randint(0, h2 // 2, (1,), generator=g))
            ys = torch.randint(top, h2, (n,), generator=g); xs = torch.randint(0, h2, (n,), generator=g)
            dmap = torch.zeros(1, h2, h2)
            dmap.index_put_((torch.zeros_like(ys), ys, xs), torch.ones(n), accumulate=True)
            img = F.interpolate(dmap.unsqueeze(0), size=(s, s), mode="bilinear", align_corners=False)[0]
            img = torch.cat([img, img * 0.5, torch.zeros_like(img)], 0) * 0.5 + 0.05 * torch.randn(3, s, s, generator=g)
            imgs.append(img); dens.append(dmap)
        return torch.stack(imgs), torch.stack(dens) * 100.0   # amplified density
    data = [batch() for _ in range(6)]
    batches = [data[i % 6] for i in range(cfg["steps"])]
    model = CrowdNet(cfg["c"], cfg["nb"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    def loss_fn(out, gt_density):
        pix = ((out["density"] - gt_density) ** 2).mean()
        count_err = (out["count"] - gt_density.sum(dim=(1, 2, 3))).abs()
        return 1e-2 * pix + 1e-3 * count_err.mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
