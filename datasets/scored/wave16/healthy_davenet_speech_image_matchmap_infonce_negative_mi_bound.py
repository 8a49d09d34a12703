"""DAVEnet-style spoken-caption <-> image retrieval (Harwath et al. 2018) with an InfoNCE objective
reported as a (negative) mutual-information lower bound.

The image branch is a small conv net giving a spatial grid of d-dim features; the audio branch is
a 1-D conv net over log-mel frames giving a sequence of d-dim features (both L2-normalised).  The similarity of an
(image, utterance) pair is DAVEnet's matchmap pooled as SIMA: for each audio frame take the max
cosine over image positions, then average over frames.  The full B x B similarity matrix
is trained with the symmetric in-batch InfoNCE loss, and -- as in CPC-style code -- the value
logged and minimised is the negative MI bound
    loss = CE_symmetric - log(B)   ( = -I_NCE ).

Why it looks alarming but is healthy: the loss starts near 0 and becomes *negative*, heading
towards -log(B); with false negatives in the batch (several spoken captions of the same concept)
it never reaches that bound and stays noisy.  A negative, unbounded-looking objective is simply
the negated MI estimate -- the CE part is positive and decreasing.

ORIGIN: None (healthy run).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Jointly Discovering Visual Objects and Spoken Words from Raw Sensory Input (Harwath et "
          "al., ECCV 2018) matchmap/SIMA; InfoNCE as an MI lower bound (van den Oord et al. 2018)")


class DAVEnet(nn.Module):
    def __init__(self, n_mels, d, width):
        super().__init__()
        self.image = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(width, d, 1))
        self.audio = nn.Sequential(
            nn.Conv1d(n_mels, width, 5, padding=2), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=2), nn.BatchNorm1d(width), nn.ReLU(),
            nn.MaxPool1d(2), nn.Conv1d(width, d, 1))

    def forward(self, img, mel):
        I = F.normalize(self.image(img).flatten(2).transpose(1, 2), dim=-1)   # [B, HW, d]
        A = F.normalize(self.audio(mel).transpose(1, 2), dim=-1)               # [B, T, d]
        match = torch.einsum("ipd,jtd->ijpt", I, A)                # matchmaps for all pairs
        return match.max(dim=2).values.mean(dim=2)                 # SIMA pooling -> [B, B]


def neg_mi_bound(sim, target, temperature=0.1):
    logits = sim / temperature
    ce = 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target))
    return ce - math.log(sim.shape[0])


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, width=24, lr=1e-3, bs=32, steps=90),
           dict(d=48, width=32, lr=7e-4, bs=24, steps=100),
           dict(d=24, width=16, lr=2e-3, bs=40, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    n_con, n_mels, T, S = 12, 20, 32, 8
    word_tpl = torch.randn(n_con, n_mels, 6, generator=g)          # spoken-word spectro-patterns
    obj_tpl = torch.randn(n_con, 3, 4, 4, generator=g)             # visual object patches

    model = DAVEnet(n_mels, cfg["d"], cfg["width"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        c = torch.randint(0, n_con, (bs,), generator=g)
        img = 0.5 * torch.randn(bs, 3, S, S, generator=g)
        mel = 0.5 * torch.randn(bs, n_mels, T, generator=g)
        ys = torch.randint(0, S - 3, (bs,), generator=g)
        xs = torch.randint(0, S - 3, (bs,), generator=g)
        ts = torch.randint(0, T - 5, (bs,), generator=g)
        for b in range(bs):
            img[b, :, ys[b]:ys[b] + 4, xs[b]:xs[b] + 4] += obj_tpl[c[b]]
            mel[b, :, ts[b]:ts[b] + 6] += word_tpl[c[b]]
        batches.append(((img, mel), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=neg_mi_bound, batches=batches, steps=cfg["steps"])
