"""Listen-Attend-Spell speller (the language side of an attention ASR model): the listener's
encoder states are given (pre-computed acoustic features projected by a frozen-style linear
listener), an LSTM speller with teacher forcing and dot-product attention predicts characters,
cross-entropy; plain SGD with momentum, no gradient clipping.

Mechanism: the learning rate (lr 1-2, momentum 0.9) was copied from a large-batch recipe that
also used gradient-norm clipping; with a small batch and no clipping every update is far larger
than the weights (update/weight ratio >> 1e-3): the character logits blow up, the softmax
saturates on wrong characters and the loss explodes to inf/NaN or bounces far above the start.
ORIGIN: None -- an optimiser setting, every layer is over-stepped.
Fix: lr 0.1 (same momentum, same data, same init).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Chan et al. 2016 Listen, Attend and Spell; ESPnet/LAS re-implementations copying "
          "SGD lr without the recipe's grad clipping ('loss nan after a few iterations')")


class Speller(nn.Module):
    def __init__(self, feat, d, C):
        super().__init__()
        self.listener = nn.Linear(feat, d)
        self.emb = nn.Embedding(C, d)
        self.lstm = nn.LSTM(2 * d, d, batch_first=True)
        self.out = nn.Linear(2 * d, C)

    def forward(self, feats, prev_chars):
        enc = torch.tanh(self.listener(feats))            # (B, Te, d)
        B, Td = prev_chars.shape
        ctx = enc.mean(1, keepdim=True).expand(-1, Td, -1)
        h, _ = self.lstm(torch.cat([self.emb(prev_chars), ctx], -1))
        attn = torch.softmax(h @ enc.transpose(1, 2), -1)
        c = attn @ enc
        return self.out(torch.cat([h, c], -1))            # (B, Td, C)


def build(seed: int, fixed: bool = False) -> dict:
    d, bs, lr_bad = [(24, 8, 2.0), (32, 6, 1.5), (16, 10, 2.5)][seed % 3]
    lr = 0.1 if fixed else lr_bad
    C, Te, Td, feat = 12, 12, 6, 10
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(10000 + seed)
    model = Speller(feat, d, C)
    proto = torch.randn(C, feat, generator=g)               # acoustic prototype per character
    steps = 60
    batches = []
    for _ in range(steps):
        chars = torch.randint(2, C, (bs, Td), generator=g)
        frames = chars.repeat_interleave(2, 1)               # 2 frames per character
        feats = proto[frames] + 0.3 * torch.randn(bs, Te, feat, generator=g)
        prev = torch.cat([torch.ones(bs, 1, dtype=torch.long), chars[:, :-1]], 1)   # <sos>=1
        batches.append(((feats, prev), chars))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
