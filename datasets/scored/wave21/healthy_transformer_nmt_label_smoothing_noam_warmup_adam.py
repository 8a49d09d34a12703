"""Healthy: tiny Transformer NMT (nn.Transformer encoder-decoder, "Annotated Transformer"
recipe) on a toy translation task (word-by-word lexicon + reordering), label-smoothed
cross-entropy (eps 0.1) and Adam(0.9, 0.98, eps 1e-9) with the Noam schedule
lr = d^-0.5 * min(step^-0.5, step * warmup^-1.5) implemented as an Adam subclass.

Looks alarming but is fine: the loss barely moves during warmup (the lr starts ~1e-4), the
label smoothing puts a floor well above zero (the loss never goes below ~0.5 even when every
token is right), and the lr peak after warmup gives a visible bump.  It converges.
ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Vaswani et al. 2017; Harvard NLP 'The Annotated Transformer' NoamOpt + "
          "LabelSmoothing; torch.nn.Transformer tutorial for translation")


class NoamAdam(torch.optim.Adam):
    def __init__(self, params, d_model, warmup, factor=1.0):
        super().__init__(params, lr=0.0, betas=(0.9, 0.98), eps=1e-9)
        self.d_model, self.warmup, self.factor, self._n = d_model, warmup, factor, 0

    def step(self, closure=None):
        self._n += 1
        lr = self.factor * self.d_model ** -0.5 * min(self._n ** -0.5, self._n * self.warmup ** -1.5)
        for gr in self.param_groups:
            gr["lr"] = lr
        return super().step(closure)


class TinyNMT(nn.Module):
    def __init__(self, V, d, layers):
        super().__init__()
        self.src_emb = nn.Embedding(V, d)
        self.tgt_emb = nn.Embedding(V, d)
        self.pos = nn.Parameter(torch.randn(16, d) * 0.1)
        self.tf = nn.Transformer(d, 2, layers, layers, 2 * d, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, V)
        self.d = d

    def forward(self, src, tgt_in):
        T = tgt_in.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        s = self.src_emb(src) * self.d ** 0.5 + self.pos[: src.shape[1]]
        t = self.tgt_emb(tgt_in) * self.d ** 0.5 + self.pos[:T]
        return self.out(self.tf(s, t, tgt_mask=mask))


def build(seed: int, fixed: bool = False) -> dict:
    d, layers, bs, warmup, factor = [(32, 1, 16, 15, 0.08), (32, 2, 12, 20, 0.08), (24, 1, 20, 10, 0.07)][seed % 3]
    V, L = 20, 6
    BOS = 0
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15000 + seed)
    model = TinyNMT(V, d, layers)
    lex = torch.randperm(V - 1, generator=g) + 1          # source word -> target word
    steps = 100
    batches = []
    for _ in range(steps):
        src = torch.randint(1, V, (bs, L), generator=g)
        tgt = lex[src - 1].flip(1)                            # translate + reverse word order
        tgt_in = torch.cat([torch.full((bs, 1), BOS), tgt[:, :-1]], 1)
        batches.append(((src, tgt_in), tgt))
    opt = NoamAdam(model.parameters(), d, warmup, factor)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), label_smoothing=0.1)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
