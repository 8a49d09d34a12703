"""SiamFC-style tracker head: a shared conv embedding is applied to an 8x8 exemplar and a 24x24 search
image, the exemplar features are cross-correlated over the search features, and sigmoid(score map) is
regressed onto a Gaussian heat-map centred on the true target position (MSE). A raw cross-correlation
sums 32 channels x 8 x 8 = 2048 products, so its values are in the tens; SiamFC therefore rescales the
score map (out_scale 1e-3 / a BatchNorm2d(1) "adjust" layer) before the logistic. Here that adjust
layer was dropped, so the sigmoid inside the correlation head sees pre-activations of +-40 and returns
0 or 1 almost everywhere; its derivative (~1e-17) blocks every gradient to the embedding and the loss
stays flat (finite, no NaN). Fix: the BatchNorm2d(1) adjust layer on the score map (normalisation,
i.e. smaller pre-activations into the sigmoid)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "head"
SOURCE = ("SiamFC, Bertinetto et al. 2016, and its PyTorch ports (siamfc-pytorch out_scale=0.001, "
          "match_BatchNorm on the score map); ports that drop the adjust step get a saturated score map")


class XCorrHead(nn.Module):
    def __init__(self, adjust):
        super().__init__()
        self.adjust = nn.BatchNorm2d(1) if adjust else None

    def forward(self, z, x):
        b, c, hz, wz = z.shape
        score = F.conv2d(x.reshape(1, b * c, x.shape[2], x.shape[3]), z, groups=b)
        score = score.reshape(b, 1, score.shape[2], score.shape[3])
        if self.adjust is not None:
            score = self.adjust(score)
        return torch.sigmoid(score)


class SiamFC(nn.Module):
    def __init__(self, adjust):
        super().__init__()
        self.embed = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1),
        )
        self.head = XCorrHead(adjust)

    def forward(self, exemplar, search):
        return self.head(self.embed(exemplar), self.embed(search))


def _pairs(g, n, S=24, E=8):
    R = S - E + 1
    search = 0.5 * torch.randn(n, 1, S, S, generator=g)
    exemplar = torch.empty(n, 1, E, E)
    label = torch.empty(n, 1, R, R)
    yy, xx = torch.meshgrid(torch.arange(R).float(), torch.arange(R).float(), indexing="ij")
    for i in range(n):
        patt = torch.randn(1, E, E, generator=g)
        r, c = int(torch.randint(0, R, (1,), generator=g)), int(torch.randint(0, R, (1,), generator=g))
        search[i, :, r:r + E, c:c + E] = patt
        exemplar[i] = patt + 0.1 * torch.randn(1, E, E, generator=g)
        label[i, 0] = torch.exp(-((yy - r) ** 2 + (xx - c) ** 2) / (2 * 1.5 ** 2))
    return exemplar, search, label


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SiamFC(adjust=fixed)
    ex, se, lab = _pairs(g, 160)
    steps, bs = 60, 12
    batches = []
    for s in range(steps):
        idx = torch.randint(0, ex.shape[0], (bs,), generator=g)
        batches.append(((ex[idx], se[idx]), lab[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
