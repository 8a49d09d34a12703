"""Stacked Attention Network (SAN, Yang et al. 2016) for VQA with soft answer targets.

An LSTM encodes the question into u; two attention hops over the grid/region features v_i compute
h = tanh(W_I v_i + W_Q u), p = softmax(w_p h), u <- u + sum_i p_i v_i, and a linear classifier
over the answer vocabulary predicts the answer.  Following common VQA practice the target is the
distribution of the 10 annotators' answers restricted to the answer vocabulary:
    target = counts / counts.sum(1)
and the loss is the soft cross-entropy  -sum_a target_a log softmax(logits)_a.

Mechanism: the target normalisation is an unguarded division.  For almost every question at least
one of the 10 human answers is in the vocabulary, so the run is perfectly calm -- until a batch
contains a question whose answers are all out-of-vocabulary (counts all zero).  0/0 gives a NaN
target row, the soft cross-entropy is NaN, and the NaN gradient poisons every weight through the
optimizer step.  Nothing about the data is corrupt: all-OOV questions are a normal, rare case.

ORIGIN: None -- the 0/0 happens in the loss's target normalisation, not inside a model module.

Fix: ``counts / counts.sum(1, keepdim=True).clamp_min(1)`` (an all-OOV question then simply
contributes zero loss).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Stacked Attention Networks for Image Question Answering (Yang et al., CVPR 2016); "
          "VQA soft-target pipelines normalising in-vocabulary annotator counts, NaN loss on "
          "questions whose answers are all out of vocabulary")


class AttentionHop(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.w_i = nn.Linear(d, k, bias=False)
        self.w_q = nn.Linear(d, k)
        self.w_p = nn.Linear(k, 1)

    def forward(self, v, u):
        h = torch.tanh(self.w_i(v) + self.w_q(u)[:, None])
        p = torch.softmax(self.w_p(h), dim=1)
        return u + (p * v).sum(1)


class SAN(nn.Module):
    def __init__(self, vocab, feat_dim, d, k, hops, n_ans):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, d, batch_first=True)
        self.img = nn.Sequential(nn.Linear(feat_dim, d), nn.Tanh())
        self.hops = nn.ModuleList([AttentionHop(d, k) for _ in range(hops)])
        self.cls = nn.Linear(d, n_ans)

    def forward(self, q_ids, regions):
        _, (h, _) = self.lstm(self.embed(q_ids))
        u, v = h[-1], self.img(regions)
        for hop in self.hops:
            u = hop(v, u)
        return self.cls(u)


def make_loss(safe):
    def soft_ce(logits, counts):
        denom = counts.sum(1, keepdim=True)
        if safe:
            denom = denom.clamp_min(1.0)
        target = counts / denom
        return -(target * F.log_softmax(logits, dim=1)).sum(1).mean()
    return soft_ce


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=64, k=32, hops=2, lr=2e-3, bs=32, steps=100, oov_step=58),
           dict(d=96, k=48, hops=1, lr=1e-3, bs=24, steps=90, oov_step=37),
           dict(d=48, k=24, hops=2, lr=3e-3, bs=40, steps=110, oov_step=81)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2700 + seed)
    n_ans, n_col, feat_dim, n_reg, vocab, q_len = 12, 8, 32, 9, 30, 6
    col_tpl = torch.randn(n_col, feat_dim, generator=g)

    model = SAN(vocab, feat_dim, cfg["d"], cfg["k"], cfg["hops"], n_ans)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    batches = []
    bs = cfg["bs"]
    for step in range(cfg["steps"]):
        c = torch.randint(0, n_col, (bs,), generator=g)
        regions = 0.5 * torch.randn(bs, n_reg, feat_dim, generator=g)
        slot = torch.randint(0, n_reg, (bs,), generator=g)
        regions[torch.arange(bs), slot] += 2.0 * col_tpl[c]              # the salient object
        q_ids = torch.randint(1, vocab, (bs, q_len), generator=g)
        q_ids[:, 0] = 0                                                  # "what colour is ..."
        # 10 annotators: most give the true colour, some a near-synonym in the vocab,
        # some an out-of-vocabulary string (not counted)
        r = torch.rand(bs, 10, generator=g)
        ans = torch.where(r < 0.7, c[:, None], torch.randint(0, n_ans, (bs, 10), generator=g))
        in_vocab = r < 0.92
        if step == cfg["oov_step"]:
            in_vocab[3] = False                                          # all 10 answers OOV
        counts = torch.zeros(bs, n_ans).scatter_add_(1, ans, in_vocab.float())
        batches.append(((q_ids, regions), counts))
    return dict(model=model, optimizer=opt, loss_fn=make_loss(safe=fixed), batches=batches,
                steps=cfg["steps"])
