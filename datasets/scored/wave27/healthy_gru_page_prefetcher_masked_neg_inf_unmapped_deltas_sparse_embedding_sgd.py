"""Healthy: page-level prefetcher.  A GRU reads the last T page deltas of a process (sparse
``nn.Embedding(sparse=True)`` over a large delta vocabulary, plain SGD which supports sparse
gradients) and scores every candidate delta; candidates that would cross into an unmapped VMA
are masked with ``-inf`` before the cross-entropy (the OS would never prefetch them).

Why it looks alarming but is fine: most logits are exactly -inf in every batch, the embedding
gradients are sparse (only the rows of the deltas present in the batch get a gradient, the rest
have none, so most of the table receives exactly-zero updates every step), and the per-batch
loss is noisy because the mask changes from batch to batch.  The target delta is always a
mapped candidate, so no -inf ever reaches the loss value or its gradient (softmax of -inf is an
exact 0), and the model learns the strided patterns.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Learned prefetchers over page/address deltas (Hashemi et al. ICML 2018; Shi et al. "
          "'Voyager', ASPLOS 2021); masked_fill(-inf) over invalid classes and sparse embedding "
          "gradients with torch.optim.SGD (PyTorch docs: nn.Embedding sparse=True)")


class PagePrefetcher(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, sparse=True)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.score = nn.Linear(hidden, vocab)

    def forward(self, deltas, valid):
        h, _ = self.gru(self.emb(deltas))
        logits = self.score(h[:, -1])
        return logits.masked_fill(~valid, float("-inf"))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab = [256, 200, 240][seed % 3]
    emb = [32, 24, 48][seed % 3]
    hidden = [64, 96, 48][seed % 3]
    lr = [0.5, 0.3, 0.4][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 150
    T = 8

    torch.manual_seed(seed)
    model = PagePrefetcher(vocab, emb, hidden)
    n_pat = 24
    patterns = torch.randint(0, vocab, (n_pat, 3), generator=g)
    batches = []
    for _ in range(steps):
        pid = torch.randint(0, n_pat, (bs,), generator=g)
        phase = torch.randint(0, 3, (bs,), generator=g)
        idx = (phase.unsqueeze(1) + torch.arange(T + 1)) % 3
        seq = patterns[pid.unsqueeze(1), idx]
        target = seq[:, T]
        valid = torch.rand(bs, vocab, generator=g) < 0.3  # mapped candidates for this process
        valid[torch.arange(bs), target] = True
        batches.append(((seq[:, :T], valid), target))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
