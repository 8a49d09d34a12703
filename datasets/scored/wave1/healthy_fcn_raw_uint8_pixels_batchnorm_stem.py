"""Healthy run: a small fully-convolutional segmenter for 3-class semantic segmentation (background /
object / boundary) whose input is the raw camera frame as float 0-255 values, never divided by 255
or standardised -- which looks exactly like an unscaled-input bug -- but whose FIRST module is a
BatchNorm2d over the input channels (the "BN as input normalisation" pattern used in many Kaggle /
embedded models so that preprocessing lives inside the graph). BN standardises the pixels with
batch statistics, so the first conv sees zero-mean unit-variance inputs and the run trains
normally with AdamW and a per-pixel cross-entropy; the model returns a dict with the logits and an
auxiliary low-resolution head, and the loss weights both. The large raw values are harmless here;
fixed=True returns the same run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ('Known pattern: BatchNorm as the first layer instead of explicit input normalisation; FCN '
          '(Long et al. 2015) with an auxiliary head as in PSPNet / torchvision segmentation models')


class FCN(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.input_norm = nn.BatchNorm2d(3)
        self.enc1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.aux = nn.Conv2d(32, k, 1)
        self.dec = nn.Sequential(nn.Conv2d(32 + 16, 16, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(16, k, 1)

    def forward(self, img):
        x = self.input_norm(img)
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        up = F.interpolate(e2, size=e1.shape[-2:], mode="bilinear", align_corners=False)
        return {"out": self.cls(self.dec(torch.cat([up, e1], 1))), "aux": self.aux(e2)}


def seg_loss(out, target):
    aux_t = target[:, ::2, ::2]
    return F.cross_entropy(out["out"], target) + 0.4 * F.cross_entropy(out["aux"], aux_t)


def _make_batch(g, n, s=24):
    ii = torch.arange(s).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    imgs = torch.zeros(n, 3, s, s)
    tgt = torch.zeros(n, s, s, dtype=torch.long)
    for i in range(n):
        cy, cx = (torch.rand(2, generator=g) * 12 + 6).tolist()
        r = float(torch.rand(1, generator=g)) * 4 + 3
        d = torch.sqrt((yy - cy) ** 2 + (xx - cx) ** 2)
        inside = d < r
        edge = (d >= r - 1) & (d < r + 1)
        bg_col = torch.rand(3, generator=g) * 120 + 40
        fg_col = torch.rand(3, generator=g) * 120 + 100
        img = bg_col[:, None, None].expand(3, s, s).clone()
        img[:, inside] = fg_col[:, None]
        imgs[i] = (img + 12 * torch.randn(3, s, s, generator=g)).clamp(0, 255).round()
        tgt[i][inside] = 1
        tgt[i][edge] = 2
    return imgs, tgt


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 8) for _ in range(10)]
    model = FCN()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=seg_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
