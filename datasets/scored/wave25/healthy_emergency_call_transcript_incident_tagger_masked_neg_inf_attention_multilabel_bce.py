"""Emergency-call transcripts: self-attention incident tagger with -inf padding masks (multi-label).

Domain: a public-safety answering point tags each call transcript (speech-to-text of the first
30 seconds) with the services and incident types it needs: fire, EMS, police, traffic,
hazmat, mental-health crisis -- several can apply at once (a crash with injuries and a fuel
leak). Transcripts are variable length and padded. The model is hand-written: token + position
embeddings, one self-attention block whose scores for padded key positions are set to -inf
with masked_fill before the softmax, a feed-forward block, then masked mean pooling and a
linear head trained with BCE-with-logits (AdamW).

Why it looks alarming but is healthy:
  * the attention score tensor holds -inf in every padded key column on every step -- a monitor
    that scans activations for non-finite values sees -inf all the time. Every transcript has at
    least 6 real tokens, so no softmax row is fully masked; softmax turns -inf into exact zeros,
    the pooled features and the loss are finite, and gradients through the masked positions are
    exactly zero (also expected);
  * label frequencies are very unequal (hazmat is rare), so many output units get almost only
    negative targets; the loss still falls steadily.

ORIGIN: None -- healthy run.

Fix: none needed (fixed=True builds the identical run).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Vaswani et al. 2017 key-padding masking with -inf (as in nn.MultiheadAttention); NLP "
          "on emergency-call transcripts (e.g. Blomberg et al. 2019 on machine learning for "
          "out-of-hospital cardiac arrest recognition in emergency calls)")

N_TAGS = 6


class MaskedSelfAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.d = d

    def forward(self, h, pad):
        q, k, v = self.qkv(h).chunk(3, -1)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.d)
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))
        return self.proj(torch.softmax(scores, -1) @ v)


class CallTagger(nn.Module):
    def __init__(self, vocab, d, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.attn = MaskedSelfAttention(d)
        self.norm1 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm2 = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_TAGS)

    def forward(self, ids, lengths):
        pad = torch.arange(ids.shape[1])[None, :] >= lengths[:, None]
        h = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))[None]
        h = self.norm1(h + self.attn(h, pad))
        h = self.norm2(h + self.ff(h))
        keep = (~pad).float().unsqueeze(-1)
        pooled = (h * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [48, 64, 32][seed % 3]
    batch = [32, 24, 40][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    max_len = [32, 28, 36][seed % 3]
    vocab, steps = 300, 150
    tag_p = torch.tensor([0.3, 0.5, 0.35, 0.25, 0.05, 0.12])
    kw = (torch.randperm(vocab - 1, generator=g)[: N_TAGS * 8] + 1).view(N_TAGS, 8)

    batches = []
    for _ in range(steps):
        y = (torch.rand(batch, N_TAGS, generator=g) < tag_p).float()
        lengths = torch.randint(6, max_len + 1, (batch,), generator=g)
        ids = torch.randint(1, vocab, (batch, max_len), generator=g)
        for i in range(batch):
            for t in y[i].nonzero().flatten().tolist():
                pos = torch.randint(0, int(lengths[i]), (2,), generator=g)
                ids[i, pos] = kw[t, torch.randint(0, 8, (2,), generator=g)]
        ids = torch.where(torch.arange(max_len)[None, :] < lengths[:, None], ids, 0)
        batches.append(((ids, lengths), y))
    model = CallTagger(vocab, d, max_len)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
