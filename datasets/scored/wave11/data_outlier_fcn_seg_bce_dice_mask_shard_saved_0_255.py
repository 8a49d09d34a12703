"""Small fully-convolutional binary segmentation net (encoder-decoder with a skip, no normalisation)
trained with BCE-with-logits + soft Dice and SGD + momentum. The masks come from PNG shards; one
shard was exported without the `/ 255` conversion, so the batch drawn from it (step 30) has mask
values {0, 255} instead of {0, 1}. `binary_cross_entropy_with_logits` does not check its targets:
with t = 255 the per-pixel loss is -255 log s + 254 log(1 - s), unbounded below (that batch logs a
loss of about -600), and its gradient w.r.t. the logit is s - 255 on every foreground pixel, a
gradient norm ~5000x that of the clean batches around it. The one update, carried on by momentum,
throws the logits to ~1e5, the next clean batches answer with huge BCE gradients, the share of
active first-layer ReLU outputs falls from ~50% to a few percent, and the loss wanders for the rest
of the run without getting back below its starting level. Dropping the corrupt shard (or normalising
it) fixes the run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Segmentation masks read from 8-bit PNGs without normalising 255 -> 1 (common torchvision/"
          "albumentations pipeline bug); BCEWithLogits accepts targets outside [0, 1] silently")

S = 24
BAD_STEP = 30


class TinyFCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Conv2d(1, 16, 3, padding=1)
        self.enc2 = nn.Conv2d(16, 32, 3, padding=1, stride=2)
        self.mid = nn.Conv2d(32, 32, 3, padding=1)
        self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec = nn.Conv2d(32, 16, 3, padding=1)
        self.out = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        e1 = F.relu(self.enc1(x))
        e2 = F.relu(self.enc2(e1))
        m = F.relu(self.mid(e2))
        u = F.relu(self.up(m))
        d = F.relu(self.dec(torch.cat([u, e1], 1)))
        return self.out(d).squeeze(1)


def make_batch(g, B):
    img = 0.4 * torch.randn(B, 1, S, S, generator=g)
    mask = torch.zeros(B, S, S)
    ys, xs = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    for b in range(B):
        for _ in range(int(torch.randint(1, 3, (1,), generator=g))):
            cx, cy = (torch.rand(2, generator=g) * (S - 8) + 4).tolist()
            r = float(torch.rand(1, generator=g) * 3 + 2.5)
            blob = (((xs - cx) ** 2 + (ys - cy) ** 2) < r * r).float()
            mask[b] = torch.maximum(mask[b], blob)
        img[b, 0] += 1.2 * mask[b]
    return img, mask


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(255 + seed)
    steps, B = 120, 12
    batches = []
    for step in range(steps):
        img, mask = make_batch(g, B)
        if step == BAD_STEP and not fixed:
            mask = mask * 255.0          # shard exported without the /255 normalisation
        batches.append((img, mask))
    model = TinyFCN()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def loss_fn(logit, mask):
        bce = F.binary_cross_entropy_with_logits(logit, mask)
        p = torch.sigmoid(logit)
        inter = (p * mask).sum((1, 2))
        dice = 1 - (2 * inter + 1) / (p.sum((1, 2)) + mask.sum((1, 2)) + 1)
        return bce + dice.mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
