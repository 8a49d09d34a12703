"""Online topic classifier on a drifting news stream: each step is the next batch of articles
as L2-normalised TF-IDF vectors (vocabulary fixed at launch; topic word distributions drift over
time), a bias-free two-layer encoder, and a cosine-similarity classifier (normalised embedding
times normalised class prototypes, scaled by s = 16, as in NormFace/CosFace-style heads that are
popular for streams with changing class balance), trained with cross-entropy and Adagrad.

Mechanism: the cosine head normalises by hand, ``e / e.pow(2).sum(-1, keepdim=True).sqrt()``.
Articles that are nothing but a photo gallery or a video embed have no in-vocabulary token left
after stop-word removal: their TF-IDF vector is all zeros (a legitimate input; the vectoriser
returns zeros for empty documents), the bias-free encoder maps it to the zero embedding, and the
normalisation computes 0 / 0 = NaN.  The NaN logits make the batch loss NaN the first time such
an article arrives (a seed-dependent step in the middle of the run); every earlier step is calm.

ORIGIN = "head": the cosine classifier is the module that performs the unsafe division; the
encoder produces a finite (zero) embedding.

Fix: normalise with an epsilon (``F.normalize(e, dim=-1, eps=1e-8)``, i.e. divide by
max(||e||, eps)), so an empty article gets zero logits (a uniform prediction); model, data,
optimiser and steps unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = ("Hand-written L2 normalisation without epsilon in cosine classifiers (NormFace, Wang et "
          "al. 2017; CosFace) hit by zero vectors; scikit-learn TfidfVectorizer returns all-zero "
          "rows for empty documents; common 'NaN loss with cosine similarity' reports.")


class CosineHead(nn.Module):
    def __init__(self, d, n_classes, scale, safe):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, d) * 0.1)
        self.scale = scale
        self.safe = safe

    def forward(self, e):
        if self.safe:
            e_n = F.normalize(e, dim=-1, eps=1e-8)
        else:
            e_n = e / e.pow(2).sum(-1, keepdim=True).sqrt()
        w_n = self.weight / self.weight.pow(2).sum(-1, keepdim=True).sqrt()
        return self.scale * e_n @ w_n.t()


class NewsClassifier(nn.Module):
    def __init__(self, vocab, hidden, d, n_classes, safe):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(vocab, hidden, bias=False), nn.ReLU(),
                                     nn.Linear(hidden, d, bias=False))
        self.head = CosineHead(d, n_classes, 16.0, safe)

    def forward(self, x):
        return self.head(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1717 + seed)
    vocab = pick(1, [400, 600, 500])
    hidden = pick(2, [128, 96, 192])
    d = pick(3, [32, 48, 64])
    lr = pick(4, [0.02, 0.03, 0.015])
    batch = pick(5, [32, 48, 64])
    empty_step = pick(6, [57, 83, 112, 140])
    steps = 160
    n_classes = 8

    model = NewsClassifier(vocab, hidden, d, n_classes, safe=fixed)

    # topic word distributions: a core vocabulary per topic that slowly drifts over the stream
    core0 = torch.rand(n_classes, vocab, generator=g) ** 4
    core1 = torch.rand(n_classes, vocab, generator=g) ** 4
    idf = 1.0 + 2.0 * torch.rand(vocab, generator=g)

    def articles(n, t):
        a = 0.5 - 0.5 * math.cos(math.pi * t / steps)  # drift from core0 to core1
        y = torch.randint(0, n_classes, (n,), generator=g)
        probs = (1 - a) * core0[y] + a * core1[y] + 0.1
        length = torch.randint(10, 60, (n, 1), generator=g).float()
        counts = torch.poisson(probs / probs.sum(1, keepdim=True) * length, generator=g)
        tfidf = counts * idf
        return tfidf, y

    batches = []
    for s in range(steps):
        x, y = articles(batch, s)
        if s == empty_step:
            x[0] = 0.0  # photo-gallery article: no in-vocabulary token
        norm = x.norm(dim=1, keepdim=True)
        x = torch.where(norm > 0, x / norm.clamp_min(1e-12), x)  # vectoriser's row L2 norm
        batches.append((x, y))

    optimizer = torch.optim.Adagrad(model.parameters(), lr=lr)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.cross_entropy(out, y),
            "batches": batches, "steps": steps}
