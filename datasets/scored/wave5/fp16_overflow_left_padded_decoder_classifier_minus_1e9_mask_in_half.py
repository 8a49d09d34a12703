"""A small decoder-only (causal) Transformer classifies token sequences from the representation
of the LAST token, so batches are left-padded, as is usual for decoder-only models. The
attention module builds its additive mask the "BERT way": the 0/1 mask is first cast to the
scores' dtype "for fp16 compatibility" and then multiplied by -1e9; the causal mask is built the
same way and the two are added. Under float16 autocast the scores are half, so -1e9 overflows
the half range (max 65504) and becomes -inf. As long as the length-bucketed batches contain no
padding nothing happens, but at the first bucket with left padding the leading pad queries
see only padded keys (causal + padding), their whole score row is -inf and softmax returns NaN;
the NaN rows then leak into every real token through the next layer's attention (0 * NaN) and
the loss becomes NaN. In fp32 (or bf16, whose range is fp32's) the same row is a harmless
uniform softmax over -2e9 entries. The fix runs the same autocast in bfloat16.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "blocks.0.attn"
SOURCE = ("HF transformers issues on NaN with fp16 and a -1e9/-1e4 additive attention mask "
          "(mask cast to half overflows to -inf; fully masked rows give NaN), e.g. the move "
          "to torch.finfo(dtype).min in modeling code")

V, D, H, LMAX = 60, 32, 4, 15   # odd lengths: no ties


class MaskedCausalAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x, pad):                     # pad: (B, T) 1 = real token, 0 = padding
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, H, D // H).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (D // H) ** 0.5
        causal = torch.tril(torch.ones(t, t))
        # "fp16 compatibility": cast to the scores' dtype, then scale by a big negative number
        causal_bias = (1.0 - causal.to(scores.dtype)) * -1e9
        pad_bias = (1.0 - pad[:, None, None, :].to(scores.dtype)) * -1e9
        att = torch.softmax(scores + causal_bias + pad_bias, dim=-1)
        out = (att @ v).transpose(1, 2).reshape(b, t, D)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = MaskedCausalAttention()
        self.ln2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x, pad):
        x = x + self.attn(self.ln1(x), pad)
        return x + self.mlp(self.ln2(x))


class DecoderClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(LMAX, D)
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, 2)

    def forward(self, ids, pad):
        # positions count from the first real token (left padding)
        pos = (pad.long().cumsum(1) - 1).clamp_min(0)
        h = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            h = blk(h, pad)
        return self.head(self.ln_f(h[:, -1]))


def _batch(g, polarity, bs, lengths):
    ids = torch.zeros(bs, LMAX, dtype=torch.long)
    pad = torch.zeros(bs, LMAX)
    for i, n in enumerate(lengths):
        ids[i, LMAX - n:] = torch.randint(1, V, (n,), generator=g)
        pad[i, LMAX - n:] = 1.0
    score = (polarity[ids] * pad).sum(1)        # bag-of-words "sentiment"
    return (ids, pad), (score > 0).long()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DecoderClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps, bs = 150, 32
    polarity = torch.randint(0, 2, (V,), generator=g).float() * 2 - 1   # +-1 per token
    polarity[0] = 0.0                                                    # padding id
    batches = []
    for s in range(steps):
        if s < 25:       # first length bucket: all sequences full length (no padding)
            lengths = [LMAX] * bs
        else:            # later buckets: mixed lengths, left padded
            lengths = (torch.randint(2, LMAX // 2, (bs,), generator=g) * 2 + 1).tolist()
        batches.append(_batch(g, polarity, bs, lengths))
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
