"""Music auto-tagging CNN (Choi et al. style conv-ELU blocks on a log-mel patch, global max pool,
multi-label sigmoid head trained with BCE; this small variant has no BatchNorm). The optimiser was
switched from SGD to Adam but the SGD learning rate 0.2 was kept. Adam normalises the step to ~lr
per parameter, so every weight moves by ~0.2 per step regardless of its size (update/weight ratios
~1 for conv weights of magnitude ~0.1-0.3): the filters are rewritten at every step, the
logits swing, and the optimiser ends up parking the head on the tag prior (p = 0.5 for every tag),
where the BCE sits at ln 2 for the rest of the run. ELU units do not die and nothing overflows:
a quiet, finite plateau. Fix: Adam's usual lr=1e-3."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Choi, Fazekas, Sandler 2016 'Automatic tagging using deep convolutional neural networks' "
          "(ELU FCN); common 'switched SGD to Adam and kept lr=0.2, loss stuck' reports")

N_TAGS = 6


class TagCNN(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        def blk(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.ELU(), nn.MaxPool2d(2))
        self.blocks = nn.Sequential(blk(1, ch), blk(ch, ch), blk(ch, 2 * ch))
        self.head = nn.Linear(2 * ch, N_TAGS)

    def forward(self, x):
        return self.head(self.blocks(x).amax((2, 3)))


def _batch(g, n, M=32, T=32):
    x = 0.5 * torch.randn(n, 1, M, T, generator=g)
    y = (torch.rand(n, N_TAGS, generator=g) < 0.5).float()
    for b in range(n):
        for k in range(N_TAGS):
            if y[b, k] > 0:
                if k < 3:   # tonal tags: sustained partials in a band
                    lo = 4 + 8 * k
                    x[b, 0, lo:lo + 3, :] += 1.5
                else:       # rhythmic tags: broadband onsets with a tag-specific period
                    per = [4, 6, 8][k - 3]
                    x[b, 0, :, ::per] += 1.5
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TagCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 0.2)
    pool = [_batch(g, 16) for _ in range(12)]
    steps = 100
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(logits, y):
        return F.binary_cross_entropy_with_logits(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
