"""SPLADE learned sparse retriever (Formal et al. 2021) with in-batch negatives + FLOPS regulariser.

A small Transformer encoder feeds an MLM head over the vocabulary; the sparse representation of a
text is ``max_t log(1 + ReLU(logits_t))`` over its tokens, the relevance score is the dot product
of query and passage representations, and the loss is the in-batch softmax cross-entropy plus
the FLOPS regulariser  lambda * sum_j (mean_i w_ij)^2  on queries and passages, with lambda
ramped up quadratically over the first steps (the paper's regulariser warmup).

Mechanism: the FLOPS term was written as ``(reps.sum(0) ** 2).sum()`` -- the activations are
summed over the batch instead of averaged, which makes the regulariser B^2 (~600-1600x) stronger
than configured.  As the warmup ramps lambda up, the regulariser quickly dwarfs the ranking loss
(the total loss first rises) and Adam drives every vocabulary logit below zero for every token.  Once a logit is negative for all inputs its ReLU
outputs 0 and passes no gradient -- from either the ranking loss or the regulariser -- so it can
never come back.  All representations become exactly zero, every score is 0, and the loss is
frozen at log(batch size).

ORIGIN: ``act`` -- the ReLU of the SPLADE activation log(1 + ReLU(.)), whose units all die.

Fix: the FLOPS regulariser with the batch mean, (reps.mean(0) ** 2).sum(), as in the paper.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "act"
SOURCE = ("SPLADE: Sparse Lexical and Expansion Model (Formal et al., SIGIR 2021) FLOPS "
          "regulariser; re-implementations that sum rather than average activations over the batch "
          "and collapse to all-zero representations")


class Splade(nn.Module):
    def __init__(self, vocab, d, n_layers, flops_lambda, warmup, mean_reg):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.02 * torch.randn(1, 32, d))
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.mlm = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d), nn.Linear(d, vocab))
        self.act = nn.ReLU()
        self.flops_lambda, self.warmup, self.mean_reg = flops_lambda, warmup, mean_reg
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def rep(self, ids):
        h = self.encoder(self.emb(ids) + self.pos[:, : ids.shape[1]])
        return torch.log1p(self.act(self.mlm(h))).max(dim=1).values      # [B, vocab]

    def flops(self, reps):
        if self.mean_reg:
            return (reps.mean(0) ** 2).sum()
        return (reps.sum(0) ** 2).sum()

    def forward(self, q_ids, d_ids):
        q, d = self.rep(q_ids), self.rep(d_ids)
        scores = q @ d.t()
        if self.training:
            self.step += 1
        lam = self.flops_lambda * min(1.0, (self.step.item() / self.warmup) ** 2)   # quadratic warmup
        reg = lam * (self.flops(q) + self.flops(d))
        return scores, reg


def splade_loss(out, target):
    scores, reg = out
    return F.cross_entropy(scores, target) + reg


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=48, layers=1, lr=1e-3, bs=32, steps=100, lam=3e-3, warm=25),
           dict(d=64, layers=2, lr=1e-3, bs=24, steps=120, lam=5e-3, warm=20),
           dict(d=32, layers=1, lr=2e-3, bs=40, steps=110, lam=2e-3, warm=30)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(310 + seed)
    vocab, lq, ld = 200, 5, 14

    model = Splade(vocab, cfg["d"], cfg["layers"], cfg["lam"], cfg["warm"], mean_reg=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        q = torch.randint(0, vocab, (bs, lq), generator=g)
        d = torch.randint(0, vocab, (bs, ld), generator=g)
        for b in range(bs):
            k = int(torch.randint(2, lq + 1, (1,), generator=g))
            d[b, torch.randperm(ld, generator=g)[:k]] = q[b, torch.randperm(lq, generator=g)[:k]]
        batches.append(((q, d), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=splade_loss, batches=batches, steps=cfg["steps"])
