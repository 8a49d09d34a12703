"""unsafe_op: Universal-Sentence-Encoder-style DAN dual encoder trained on STS with arccos.

Mechanism: the shared DAN tower (mean of word + bigram embeddings -> 3 tanh layers) embeds
both sentences and, as in the USE paper, the similarity is the *angular* similarity
sim = 1 - arccos(cos(u, v)) / pi, regressed onto the gold score with MSE.  The run is calm
until a batch that contains exact duplicate pairs (s1 == s2, gold 5/5, which STS-style and
paraphrase-mined data do contain).  For identical inputs the two embeddings are identical,
F.cosine_similarity returns exactly 1.0 or 1.0000001 by rounding: arccos(>1) is NaN in the
forward pass, and arccos'(1) = -1/sqrt(1 - 1) = -inf in the backward pass, so the loss
and/or every gradient in the tower becomes non-finite and the weights are NaN from then on.
The duplicate batch comes at a different step per seed.

ORIGIN: "similarity" (the AngularSimilarity module that applies arccos).
Fix: clamp the cosine to [-1 + 1e-6, 1 - 1e-6] before arccos (the only change).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "similarity"
SOURCE = ("Cer et al. 2018 'Universal Sentence Encoder' (DAN encoder, angular similarity "
          "1 - arccos(cos)/pi for STS); known pattern: torch.acos at |x| = 1 (NaN forward for "
          "x > 1 by rounding, infinite derivative at 1) on duplicate pairs")


class DANEncoder(nn.Module):
    def __init__(self, vocab, n_bigram, d, hid):
        super().__init__()
        self.words = nn.EmbeddingBag(vocab, d, mode="mean")
        self.bigrams = nn.EmbeddingBag(n_bigram, d, mode="mean")
        self.ff = nn.Sequential(nn.Linear(d, hid), nn.Tanh(), nn.Linear(hid, hid), nn.Tanh(),
                                nn.Linear(hid, hid), nn.Tanh())

    def forward(self, tokens):
        bi = (tokens[:, :-1] * 131 + tokens[:, 1:]) % self.bigrams.num_embeddings
        return self.ff(self.words(tokens) + self.bigrams(bi))


class AngularSimilarity(nn.Module):
    def __init__(self, clamp):
        super().__init__()
        self.clamp = clamp

    def forward(self, u, v):
        cos = F.cosine_similarity(u, v, dim=-1)
        if self.clamp:
            cos = cos.clamp(-1 + 1e-6, 1 - 1e-6)
        return 1.0 - torch.acos(cos) / math.pi


class USEDualEncoder(nn.Module):
    def __init__(self, vocab, n_bigram, d, hid, clamp):
        super().__init__()
        self.encoder = DANEncoder(vocab, n_bigram, d, hid)
        self.similarity = AngularSimilarity(clamp)

    def forward(self, a, b):
        return self.similarity(self.encoder(a), self.encoder(b))


def _pairs(g, n, T, vocab, n_topics):
    per = (vocab - 1) // n_topics
    ta = torch.randint(0, n_topics, (n,), generator=g)
    shift = torch.arange(n) % 3                               # 0 same, 1 near, 2 far topic
    tb = (ta + shift * (n_topics // 3)) % n_topics
    y = torch.tensor([1.0, 0.5, 0.1])[shift]

    def sent(t):
        idx = torch.randint(0, per, (n, T), generator=g)
        s = 1 + t[:, None] * per + idx
        noise = torch.rand(n, T, generator=g) < 0.2
        return torch.where(noise, torch.randint(1, vocab, (n, T), generator=g), s)

    return sent(ta), sent(tb), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=241, topics=12, nb=512, d=64, hid=128, T=10, bs=32, steps=100, lr=2e-3, dup=40),
           dict(vocab=181, topics=9, nb=384, d=48, hid=96, T=12, bs=48, steps=120, lr=1e-3, dup=75),
           dict(vocab=301, topics=15, nb=640, d=64, hid=160, T=8, bs=48, steps=140, lr=2e-3, dup=25)][seed % 3]
    model = USEDualEncoder(cfg["vocab"], cfg["nb"], cfg["d"], cfg["hid"], clamp=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    bs = cfg["bs"]
    a, b, y = _pairs(g, cfg["steps"] * bs, cfg["T"], cfg["vocab"], cfg["topics"])
    batches = []
    for i in range(cfg["steps"]):
        sa, sb, sy = a[i * bs:(i + 1) * bs].clone(), b[i * bs:(i + 1) * bs].clone(), y[i * bs:(i + 1) * bs].clone()
        if i == cfg["dup"]:                 # a shard with exact duplicate pairs (gold 5/5)
            sb[:6] = sa[:6]
            sy[:6] = 1.0
        batches.append(((sa, sb), sy))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
