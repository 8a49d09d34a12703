"""Sentence-level MT quality estimation (QuEst/OpenKiwi-style): source and MT tokens embedded,
a BiLSTM reads the MT side conditioned on a mean-pooled source vector, mean pooled again and
regressed onto HTER with MSE; Adam.

Mechanism: HTER = edits / len(post-edit).  One shard contains segments whose post-edit came back
empty (annotator deleted everything / broken export), so the label pipeline computed
edits / 0 = inf.  The batch holding those rows arrives mid-run; MSE(pred, inf) is inf, the
backward pass produces inf/NaN gradients, Adam writes NaN into every weight and the run never
recovers.  Everything before that step is calm.
ORIGIN: None -- the corruption is in the data, not in a module.
Fix: drop the rows with a non-finite HTER (the same batch with those rows filtered out).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("WMT QE shared-task HTER labels computed with tercom on empty post-edits; OpenKiwi "
          "issues about NaN loss from inf/NaN sentence scores")


class QEModel(nn.Module):
    def __init__(self, V, d):
        super().__init__()
        self.src_emb = nn.Embedding(V, d)
        self.mt_emb = nn.Embedding(V, d)
        self.lstm = nn.LSTM(2 * d, d, batch_first=True, bidirectional=True)
        self.head = nn.Sequential(nn.Linear(2 * d, d), nn.Tanh(), nn.Linear(d, 1))

    def forward(self, src, mt):
        s = self.src_emb(src).mean(1, keepdim=True).expand(-1, mt.shape[1], -1)
        h, _ = self.lstm(torch.cat([self.mt_emb(mt), s], -1))
        return self.head(h.mean(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    d, bs, lr, bad_step = [(16, 16, 3e-3, 31), (24, 12, 2e-3, 44), (16, 20, 3e-3, 22)][seed % 3]
    V, T = 40, 10
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    model = QEModel(V, d)
    perm = torch.randperm(V, generator=g)       # the "correct translation" of each source token
    steps = 60
    batches = []
    for t in range(steps):
        src = torch.randint(0, V, (bs, T), generator=g)
        err = torch.rand(bs, 1, generator=g) * 0.6
        wrong = torch.rand(bs, T, generator=g) < err
        mt = torch.where(wrong, torch.randint(0, V, (bs, T), generator=g), perm[src])
        hter = (mt != perm[src]).float().mean(1)
        if t == bad_step:
            hter[: 2 + seed] = float("inf")       # edits / len(empty post-edit)
            if fixed:                             # filter rows whose label is not finite
                keep = torch.isfinite(hter)
                src, mt, hter = src[keep], mt[keep], hter[keep]
        batches.append(((src, mt), hter))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(pred, y):
        return F.mse_loss(pred, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
