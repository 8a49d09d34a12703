"""SiamFC-style tracker (Bertinetto et al. 2016): a shared conv backbone embeds a 16x16 exemplar
and a 32x32 search region, the exemplar feature map is cross-correlated with the search feature
map (grouped conv) to give a 5x5 response map, and the response is trained (Adam, balanced
weights) towards the cell where the exemplar sits. SiamFC multiplies the raw cross-correlation
by a small out_scale (1e-3 for its 6x6x256 exemplar; ~1e-2 for this 4x4x32 one) because each
score sums hundreds of products of non-negative BN-ReLU features; this reimplementation drops
the scale and scores with sigmoid + BCELoss. The raw responses are ~50-200 at every
position of every pair, the score sigmoid returns exactly 1.0 in fp32, its derivative p*(1-p)
is exactly zero, and no gradient reaches the backbone: even Adam has nothing to rescale, and the
(clamped) BCE sits at the same value for the entire run - no NaN. Restoring out_scale (smaller
pre-activations for the sigmoid) trains the same model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "score_act"
SOURCE = ("SiamFC (Bertinetto et al., ECCVW 2016); huanglianghua/siamfc-pytorch "
          "'out = self._fast_xcorr(z, x) * self.out_scale' with out_scale=0.001")


class SiamFC(nn.Module):
    def __init__(self, out_scale=1.0):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        )
        self.out_scale = out_scale
        self.score_act = nn.Sigmoid()

    def forward(self, z, x):
        fz, fx = self.backbone(z), self.backbone(x)          # B,32,4,4 and B,32,8,8
        b, c, h, w = fx.shape
        resp = F.conv2d(fx.reshape(1, b * c, h, w), fz, groups=b).reshape(b, 1, h - fz.shape[-1] + 1, -1)
        return self.score_act(resp * self.out_scale)


def _pairs(g, n=16):
    # search region: textured background with the exemplar pasted at a random grid position
    x = 0.5 * torch.rand(n, 3, 32, 32, generator=g)
    z = torch.empty(n, 3, 16, 16)
    label = torch.zeros(n, 1, 5, 5)
    for i in range(n):
        target = torch.rand(3, 16, 16, generator=g)
        r, c = torch.randint(0, 5, (2,), generator=g).tolist()
        x[i, :, 4 * r:4 * r + 16, 4 * c:4 * c + 16] = target
        z[i] = target + 0.05 * torch.randn(3, 16, 16, generator=g)
        label[i, 0, r, c] = 1.0                           # response cell aligned with the target
    return (z, x), label


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SiamFC(out_scale=1e-2 if fixed else 1.0)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps = 150
    batches = [_pairs(g) for _ in range(steps)]

    def loss_fn(prob, label):
        pos = label.sum()
        neg = label.numel() - pos
        weight = torch.where(label > 0, 0.5 / pos, 0.5 / neg)      # SiamFC balanced weights
        return F.binary_cross_entropy(prob, label, weight=weight, reduction="sum")

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
