"""Healthy: small protein masked-language model (ESM-style) trained from scratch on
variable-length sequences: token + learned position embeddings -> pre-LN transformer blocks
with hand-written multi-head attention -> untied LM head; cross-entropy on the
15% masked positions only (labels -100 elsewhere, ignore_index), AdamW.

Why it is tricky but healthy:
- the attention scores of padded keys are set to -inf with masked_fill before the softmax;
  -inf values exist in every forward pass, but every query row always has at least its own
  (real) token unmasked, so the softmax never sees an all -inf row and no NaN is produced;
  padded query rows are computed and then ignored by the loss (label -100);
- most label positions are -100, so only ~15% of the tokens carry loss, and the embedding
  rows of residues that happen not to be masked in a batch get exactly zero gradient
  (sparse, zero-heavy embedding gradients);
- the loss is noisy from batch to batch (different numbers of masked tokens) but falls
  clearly from ~log(20) as the model learns the residue grammar of the families.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("ESM-1b / ESM-2 masked-LM objective (Rives et al. 2021; Lin et al. 2023): 15% "
          "masking, loss on masked positions only; key-padding masks filled with -inf "
          "before softmax (torch.nn.MultiheadAttention key_padding_mask semantics)")

AA = 20
MASK = 20
PAD = 21
VOCAB = 22


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)

    def forward(self, x, key_pad):
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        s = s.masked_fill(key_pad[:, None, None, :], float("-inf"))
        a = torch.softmax(s, -1)
        return self.o((a @ v).transpose(1, 2).reshape(B, L, D))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, key_pad):
        x = x + self.attn(self.ln1(x), key_pad)
        return x + self.ff(self.ln2(x))


class ProtMLM(nn.Module):
    def __init__(self, d, heads, n_layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(n_layers)])
        self.ln = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, AA)

    def forward(self, tok):
        key_pad = tok == PAD
        x = self.tok(tok) + self.pos(torch.arange(tok.shape[1]))[None]
        for b in self.blocks:
            x = b(x, key_pad)
        return self.lm_head(self.ln(x)).transpose(1, 2)        # (B, AA, L)


def _families(n_fam=6, seed=51):
    g = torch.Generator().manual_seed(seed)
    # each family: a peaked first-order Markov chain over a family-specific residue
    # alphabet (6 preferred residues carry ~90% of the mass)
    T = torch.rand(n_fam, AA, AA, generator=g) ** 4 * 0.02
    for f in range(n_fam):
        pref = torch.randperm(AA, generator=g)[:6]
        T[f][:, pref] += torch.rand(AA, 6, generator=g) ** 2
    T = T / T.sum(-1, keepdim=True)
    return T


def _batch(g, T, bs, Lmax):
    lens = torch.randint(Lmax // 2, Lmax + 1, (bs,), generator=g)
    fam = torch.randint(0, T.shape[0], (bs,), generator=g)
    seq = torch.full((bs, Lmax), PAD, dtype=torch.long)
    for i in range(bs):
        a = int(torch.randint(0, AA, (1,), generator=g))
        for j in range(int(lens[i])):
            seq[i, j] = a
            a = int(torch.multinomial(T[fam[i], a], 1, generator=g))
    real = seq != PAD
    m = (torch.rand(bs, Lmax, generator=g) < 0.15) & real
    m[:, 0] |= ~m.any(1)                              # at least one masked token per row
    labels = torch.where(m, seq, torch.full_like(seq, -100))
    inp = torch.where(m, torch.full_like(seq, MASK), seq)
    return inp, labels


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    d = [64, 48, 96][seed % 3]
    heads = [4, 4, 4][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    bs = [24, 32, 16][seed % 3]
    lr = [3e-3, 2e-3, 2e-3][seed % 3]
    Lmax = 32
    steps = 160

    T = _families()
    model = ProtMLM(d, heads, n_layers, Lmax)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def loss_fn(out, labels):
        return F.cross_entropy(out, labels, ignore_index=-100)

    batches = [_batch(g, T, bs, Lmax) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
