"""Dialect identification for code-switched social-media text (e.g. Arabizi / Darija mixed with
French, or Hinglish): a character BiGRU encodes the message, an attention-pooling module
weights the positions and a linear layer predicts the dialect.  To make the attention
interpretable (peaky on dialect-marker characters) the pooling module also returns the
attention entropy -sum(a * log a), added to the loss with a small weight.  AdamW.

Mechanism: padded positions are masked with -inf before the softmax, so their attention
weight is exactly 0 and the hand-written entropy computes 0 * log(0) = 0 * (-inf) = NaN.
The first batches come from the longest length bucket, where every message fills the
whole window and no position is masked, so the run is calm; the first mixed-length batch
(its position depends on the seed) makes the entropy, and hence the loss, NaN.

ORIGIN: ``pool`` -- the attention-pooling module that computes the entropy term; the NaN is
created by its a * log(a) on the masked positions, everything upstream is finite.

Fix (fixed=True): the entropy uses a * log(a.clamp_min(1e-12)), which is 0 with a finite
gradient where a == 0 (``torch.special.xlogy`` fixes the forward only: its backward still has
log(0) = -inf there); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "pool"
SOURCE = ("Attention-entropy regularisers computed as -(p * p.log()).sum() with -inf masked "
          "padding (PyTorch forum 'entropy of softmax with masked_fill -inf gives nan'; "
          "clamp_min epsilon); code-switched dialect ID (Arabizi, Hinglish) with char BiGRUs.")

N_CHARS = 80


class EntropyAttentionPool(nn.Module):
    def __init__(self, d, safe):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.safe = safe

    def forward(self, h, mask):
        s = self.score(h).squeeze(-1).masked_fill(~mask, float("-inf"))
        a = torch.softmax(s, dim=1)
        pooled = (a.unsqueeze(-1) * h).sum(1)
        if self.safe:
            ent = -(a * torch.log(a.clamp_min(1e-12))).sum(1).mean()
        else:
            ent = -(a * torch.log(a)).sum(1).mean()
        return pooled, ent


class DialectID(nn.Module):
    def __init__(self, emb, hidden, n_dialects, safe):
        super().__init__()
        self.emb = nn.Embedding(N_CHARS, emb, padding_idx=0)
        self.rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.pool = EntropyAttentionPool(2 * hidden, safe)
        self.out = nn.Linear(2 * hidden, n_dialects)

    def forward(self, chars):
        mask = chars != 0
        h, _ = self.rnn(self.emb(chars))
        pooled, ent = self.pool(h, mask)
        return self.out(pooled), ent


def make_loss(weight):
    ce = nn.CrossEntropyLoss()

    def loss_fn(out, y):
        logits, ent = out
        return ce(logits, y) + weight * ent
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [48, 64, 32][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 24, 48][seed % 3]
    first_mixed = [23, 41, 12][seed % 3]     # batches before this come from the longest bucket
    n_dialects = 6
    L = 32
    steps = 120

    torch.manual_seed(seed)
    model = DialectID(24, hidden, n_dialects, safe=fixed)

    # every dialect has marker characters (e.g. digits used as letters in Arabizi: 3, 7, 9)
    markers = torch.randint(1, N_CHARS, (n_dialects, 5), generator=g)
    batches = []
    for step in range(steps):
        y = torch.randint(0, n_dialects, (bs,), generator=g)
        x = torch.randint(1, N_CHARS, (bs, L), generator=g)
        n_mark = 4
        pos = torch.randint(0, L // 2, (bs, n_mark), generator=g)
        x[torch.arange(bs).unsqueeze(1), pos] = markers[y][torch.arange(bs).unsqueeze(1),
                                                           torch.randint(0, 5, (bs, n_mark), generator=g)]
        if step >= first_mixed:
            lengths = torch.randint(L // 2, L + 1, (bs,), generator=g)
            x = x.masked_fill(torch.arange(L).unsqueeze(0) >= lengths.unsqueeze(1), 0)
        batches.append((x, y))

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=optimizer, loss_fn=make_loss(0.01),
                batches=batches, steps=steps)
