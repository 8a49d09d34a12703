"""Healthy: semantic segmentation with image-level class tags (a partial-label / tag-conditioned
setting): a small encoder-decoder predicts per-pixel class logits, the logits of classes that
the image's tag list says are absent are set to -inf before the softmax, and the pixel-wise
cross-entropy ignores unlabelled pixels (ignore_index=255, object boundaries and void).

What a naive monitor might flag: the model output contains -inf in every batch (absent
classes), the log-probabilities of those classes are -inf, their logit gradients are exactly
zero, the number of labelled pixels (and so the loss scale) changes from batch to batch, and a
large share of each image contributes nothing.  None of it is a fault: the target class of a
labelled pixel is always in the image's tag list, so no -inf ever reaches the loss value, the
ignored pixels are excluded by design, and the loss falls steadily.

ORIGIN: None (healthy).  fixed=True builds the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Tag-conditioned / partial-label semantic segmentation (e.g. class-presence masking in "
          "weakly-supervised segmentation, 'BoxSup'/'ignore_index=255' VOC void pixels); masked "
          "-inf logits that never meet the target class")

IGNORE = 255


class TagMaskedSegNet(nn.Module):
    def __init__(self, width, n_cls):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * width, width, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(width, n_cls, 1)

    def forward(self, img, present):
        e1 = self.enc1(img)
        d = self.dec(torch.cat([self.up(self.enc2(e1)), e1], 1))
        logits = self.cls(d)
        return logits.masked_fill(~present[:, :, None, None], float("-inf"))


def seg_loss(logits, target):
    return F.cross_entropy(logits, target, ignore_index=IGNORE)


def _batch(g, n, n_cls, size, palette):
    img = 0.3 * torch.randn(n, 3, size, size, generator=g)
    lab = torch.zeros(n, size, size, dtype=torch.long)                 # class 0 = background
    present = torch.zeros(n, n_cls, dtype=torch.bool)
    present[:, 0] = True
    for b in range(n):
        img[b] += palette[0][:, None, None]
        for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
            c = int(torch.randint(1, n_cls, (1,), generator=g))
            h, w = (int(v) for v in torch.randint(4, 9, (2,), generator=g))
            r = int(torch.randint(0, size - h + 1, (1,), generator=g))
            q = int(torch.randint(0, size - w + 1, (1,), generator=g))
            lab[b, r:r + h, q:q + w] = c
            img[b, :, r:r + h, q:q + w] = palette[c][:, None, None] + \
                0.3 * torch.randn(3, h, w, generator=g)
        present[b, lab[b].unique()] = True
    # void band around object boundaries is unlabelled
    edge = (F.max_pool2d(lab[:, None].float(), 3, 1, 1) != -F.max_pool2d(-lab[:, None].float(),
                                                                         3, 1, 1))[:, 0]
    void = edge & (torch.rand(n, size, size, generator=g) < 0.7)
    lab = lab.masked_fill(void, IGNORE)
    return (img, present), lab


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [16, 24, 12][seed % 3]
    n_cls = [6, 8, 5][seed % 3]
    batch = [8, 6, 10][seed % 3]
    lr = [1e-3, 8e-4, 1.2e-3][seed % 3]
    steps, size = 150, 16
    model = TagMaskedSegNet(width, n_cls)
    palette = torch.rand(n_cls, 3, generator=g) * 2 - 1              # class colours
    batches = [_batch(g, batch, n_cls, size, palette) for _ in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": seg_loss, "batches": batches,
            "steps": steps}
