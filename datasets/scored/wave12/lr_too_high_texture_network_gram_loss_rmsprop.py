"""Feed-forward texture synthesis (Ulyanov et al. 2016 "Texture Networks"): a small norm-free
conv generator maps a noise tensor to a 16x16 RGB texture and is trained so that the Gram
matrices of a frozen, randomly initialised two-layer conv feature extractor (random shallow
nets suffice for texture statistics, Ustyuzhaninov et al. 2017) match those of the exemplar
texture. The generator is optimised with RMSprop at lr 1e-2, a value copied from a recipe that
optimised image PIXELS directly (Gatys-style), not network weights. RMSprop's first steps move
every weight by ~lr/sqrt(mean g^2), a large fraction of its own magnitude; since the Gram loss is
quartic in the generator output, the first few updates overshoot and the loss jumps by seven to
ten orders of magnitude within 1-3 steps. The rest of the run is spent crawling back and ends
well above the starting loss, without a NaN. With lr 1e-3 the same generator fits the exemplar's statistics."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Texture Networks (Ulyanov et al., ICML 2016); Gatys et al. 2015 Gram loss; random-"
          "feature texture synthesis (Ustyuzhaninov et al., ICLR 2017); RMSprop lr reused from "
          "pixel-space optimisation")


class TextureGenerator(nn.Module):
    def __init__(self, zc=8, ch=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(zc, ch, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(ch, ch, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(ch, 3, 1),
        )

    def forward(self, z):
        return self.net(z)


def gram(f):
    b, c, h, w = f.shape
    f = f.flatten(2)
    return f @ f.transpose(1, 2) / (c * h * w)


def _exemplar(g, hw=16):
    yy, xx = torch.meshgrid(torch.arange(hw, dtype=torch.float32), torch.arange(hw, dtype=torch.float32), indexing="ij")
    phase = torch.rand(3, 1, 1, generator=g) * 6.28
    stripes = 0.5 + 0.4 * torch.sin(0.9 * xx + 0.5 * yy + phase)
    return (stripes + 0.05 * torch.randn(3, hw, hw, generator=g)).clamp(0, 1)[None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TextureGenerator()
    # frozen random feature extractor used only inside the loss
    feat = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
    for p in feat.parameters():
        p.requires_grad_(False)
    exemplar = _exemplar(g)
    with torch.no_grad():
        f1 = feat[1](feat[0](exemplar))
        f2 = feat[3](feat[2](f1))
        target = [gram(f1), gram(f2)]

    def loss_fn(img, _unused):
        f1 = feat[1](feat[0](img))
        f2 = feat[3](feat[2](f1))
        return 1e3 * sum(((gram(f) - t) ** 2).mean() for f, t in zip((f1, f2), target))

    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else 1e-2)
    steps = 150
    batches = [(torch.rand(8, 8, 8, 8, generator=g), torch.zeros(8)) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
