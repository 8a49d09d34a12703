"""FCN-32s-style semantic segmenter: a small strided conv backbone produces a 4x4 class-score map that a
ConvTranspose2d ("upscore", x8) upsamples back to 32x32. As in the original FCN recipe, upscore is
initialised to bilinear interpolation and frozen. The port of get_upsampling_weight() wrote the bilinear
filter into weight[:, :] (every input-class x output-class pair) instead of only the diagonal
weight[range(C), range(C)]. Every output class channel is then the same sum of all upsampled class
scores, so the logits are identical across classes at every pixel: the softmax is exactly uniform, the
loss sits at ln(4) and, because the per-pixel gradient sum_c(p_c - y_c) = 0 is summed back through the
frozen all-pairs filter, the backbone receives exactly zero gradient. A silent flat stall, no NaN.
Fix: the diagonal bilinear init (one filter per class channel)."""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "upscore"
SOURCE = ("Long, Shelhamer & Darrell, FCN (fixed bilinear deconvolution, surgery.interp / "
          "get_upsampling_weight in pytorch-fcn); reported port bug filling all channel pairs")


def get_upsampling_weight(cin, cout, k, diagonal):
    factor = (k + 1) // 2
    center = factor - 1 if k % 2 == 1 else factor - 0.5
    og = torch.arange(k).float()
    f1 = 1 - (og - center).abs() / factor
    filt = f1[:, None] * f1[None, :]
    w = torch.zeros(cin, cout, k, k)
    if diagonal:
        w[range(cin), range(cout)] = filt
    else:
        w[:, :] = filt                    # bug: every class pair gets the interpolation filter
    return w


class FCN32s(nn.Module):
    def __init__(self, n_class=4, diagonal=True):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(inplace=True),
        )
        self.score_fr = nn.Conv2d(32, n_class, 3, padding=1)
        self.upscore = nn.ConvTranspose2d(n_class, n_class, 16, stride=8, padding=4, bias=False)
        with torch.no_grad():
            self.upscore.weight.copy_(get_upsampling_weight(n_class, n_class, 16, diagonal))
        self.upscore.weight.requires_grad_(False)          # fixed bilinear interpolation, as in FCN

    def forward(self, x):
        return self.upscore(self.score_fr(self.features(x)))


def _scenes(g, n, S=32):
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    img = 0.2 * torch.randn(n, 1, S, S, generator=g)
    lab = torch.zeros(n, S, S, dtype=torch.long)
    for i in range(n):
        for cls in (1, 2, 3):
            cy, cx = torch.randint(6, S - 6, (2,), generator=g).float()
            r = 4 + 3 * float(torch.rand(1, generator=g))
            if cls == 1:
                m = ((yy - cy).abs() < r) & ((xx - cx).abs() < r)
            elif cls == 2:
                m = (yy - cy) ** 2 + (xx - cx) ** 2 < r ** 2
            else:
                m = ((yy - cy).abs() < 2) & ((xx - cx).abs() < 2.5 * r)
            lab[i][m] = cls
    img[:, 0] += (lab == 1).float() * 1.0 - (lab == 2).float() * 1.0 + (lab == 3).float() * 0.5
    return img, lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FCN32s(diagonal=fixed)
    imgs, labs = _scenes(g, 256)
    steps, bs = 80, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, imgs.shape[0], (bs,), generator=g)
        batches.append((imgs[idx], labs[idx]))
    opt = torch.optim.RMSprop([p for p in model.parameters() if p.requires_grad], lr=1e-3, alpha=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
