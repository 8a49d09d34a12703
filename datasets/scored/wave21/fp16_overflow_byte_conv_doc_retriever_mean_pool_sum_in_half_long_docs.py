"""Byte-level dense retriever for long documents: a shared byte Conv1d encoder (ReLU, then a
ReLU projection) embeds queries and documents, sentence-transformers-style masked mean pooling
`(h * mask).sum(1) / mask.sum(1)`, in-batch-negative InfoNCE; trained under
torch.autocast(float16) without any fp32 island.

Mechanism: under fp16 autocast the projection output h is half precision, so the masked SUM over
the byte axis is also returned in half.  For the short queries and the first buckets of documents
the sum stays far below 65504, but the length-bucketed sampler later delivers a bucket of long
documents (whole books, 1e5+ bytes): the positive per-dimension sum passes 65504, becomes inf,
inf / length stays inf and the cosine / logits / loss are NaN.  The division by the length would
have brought the value back to a few units -- the overflow is purely the half-precision sum.
ORIGIN: proj, the op-bearing module whose half-precision output is summed (the first module
whose activations are aggregated past the fp16 range; the sum is in the pooling code after it).
Fix: pool in fp32 (`h.float()` before the masked sum), everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "proj"
SOURCE = ("sentence-transformers mean pooling (sum then divide) under fp16 autocast; HF forum "
          "'NaN embeddings for long documents with fp16' reports")


class ByteEncoder(nn.Module):
    def __init__(self, d, pool_fp32):
        super().__init__()
        self.emb = nn.Embedding(256, d)
        self.conv = nn.Conv1d(d, d, 5, padding=2)
        self.proj = nn.Linear(d, d)
        self.pool_fp32 = pool_fp32

    def encode(self, x, mask):
        h = F.relu(self.conv(self.emb(x).transpose(1, 2))).transpose(1, 2)
        h = F.relu(self.proj(h))
        if self.pool_fp32:
            h = h.float()
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1)
        return F.normalize(pooled.float(), dim=-1)

    def forward(self, q, qm, doc, dm):
        return self.encode(q, qm) @ self.encode(doc, dm).T / 0.1


def _pair(g, bs, Lq, Ld, d_topics):
    topics = torch.randint(0, d_topics, (bs,), generator=g)
    # each topic has its own byte range; queries and docs are written from the topic's bytes
    q = 32 + topics[:, None] * 8 + torch.randint(0, 8, (bs, Lq), generator=g)
    doc = 32 + topics[:, None] * 8 + torch.randint(0, 8, (bs, Ld), generator=g)
    noise = torch.rand(bs, Ld, generator=g) < 0.3
    doc = torch.where(noise, torch.randint(32, 127, (bs, Ld), generator=g), doc)
    qm = torch.ones(bs, Lq)
    dm = torch.ones(bs, Ld)
    return (q, qm, doc, dm), torch.arange(bs)


def build(seed: int, fixed: bool = False) -> dict:
    d, bs, lr, long_from, long_len = [(16, 8, 3e-3, 34, 110000), (24, 6, 2e-3, 37, 90000),
                                      (16, 10, 3e-3, 31, 100000)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    model = ByteEncoder(d, pool_fp32=fixed)
    steps = 40
    batches = []
    for t in range(steps):
        Ld = 256 if t < long_from else long_len      # length-bucketed sampler: long bucket last
        batches.append(_pair(g, bs if t < long_from else 2, 16, Ld, 10))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.float(), y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16)
