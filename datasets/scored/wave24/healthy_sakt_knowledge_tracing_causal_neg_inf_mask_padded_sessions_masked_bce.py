"""Healthy: SAKT-style self-attentive knowledge tracing. Queries are the embeddings of the
exercises being attempted, keys/values are the student's PREVIOUS interactions (exercise x
correctness, shifted right behind a start token) plus positions; one hand-written masked
attention block (scores.masked_fill(future, -inf) -> softmax), FFN, and a sigmoid head
predicting correctness; BCE-with-logits averaged over real (non-padded) attempts, Adam.

Why a naive monitor might flag it: the attention logits contain -inf for every future
position, every batch; sessions have very different lengths, so many positions are padding
whose loss is masked out (and batches carry from ~40% to ~90% real tokens, so the loss
fluctuates with the mix of students); the exercise embedding gets gradient only for the
exercises that occur in the batch (sparse, many exactly-zero rows). None of this is a fault:
each query always sees at least the start token, so no softmax row is all -inf, the -inf never
reaches the loss, and the masked positions contribute exactly zero.

ORIGIN: None (healthy run).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("SAKT (Pandey & Karypis 2019, 'A Self-Attentive model for Knowledge Tracing') with "
          "causal -inf masking and padded variable-length sessions (EdNet / ASSISTments "
          "style); padded-token loss masking")


class SAKT(nn.Module):
    def __init__(self, n_ex, d, max_len):
        super().__init__()
        self.n_ex = n_ex
        self.ex_emb = nn.Embedding(n_ex + 1, d, padding_idx=0)
        self.inter_emb = nn.Embedding(2 * n_ex + 2, d, padding_idx=0)   # +1: start token
        self.pos = nn.Embedding(max_len, d)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.norm2 = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward(self, ex, prev_inter):
        T = ex.shape[1]
        pos = self.pos(torch.arange(T))[None]
        qx = self.ex_emb(ex)
        kv = self.inter_emb(prev_inter) + pos
        q, k, v = self.q(qx), self.k(kv), self.v(kv)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        scores = scores.masked_fill(future, float("-inf"))
        h = self.norm1(qx + self.o(torch.softmax(scores, -1) @ v))
        h = self.norm2(h + self.ffn(h))
        return self.head(h).squeeze(-1)


def masked_bce(logits, tgt):
    y, mask = tgt[..., 0], tgt[..., 1]
    l = F.binary_cross_entropy_with_logits(logits, y, reduction="none")
    return (l * mask).sum() / mask.sum()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_ex = [80, 120, 100][seed % 3]
    d = [32, 48, 64][seed % 3]
    bs = [24, 32, 16][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    T, steps = 40, 150
    torch.manual_seed(seed)
    model = SAKT(n_ex, d, T)
    n_kc = 8
    kc_of = torch.randint(0, n_kc, (n_ex,), generator=g)
    diff = torch.randn(n_ex, generator=g)
    batches = []
    for _ in range(steps):
        ability = torch.randn(bs, n_kc, generator=g)
        ex = torch.randint(0, n_ex, (bs, T), generator=g)
        practice = torch.zeros(bs, n_kc)
        corr = torch.zeros(bs, T)
        for t in range(T):
            kc = kc_of[ex[:, t]]
            a = ability.gather(1, kc[:, None]).squeeze(1) + 0.3 * practice.gather(1, kc[:, None]).squeeze(1)
            corr[:, t] = (torch.rand(bs, generator=g) < torch.sigmoid(1.5 * a - 2.5 * diff[ex[:, t]])).float()
            practice.scatter_add_(1, kc[:, None], (2 * corr[:, t:t + 1] - 1))
        lens = torch.randint(int(T * 0.3), T + 1, (bs,), generator=g)
        mask = (torch.arange(T)[None, :] < lens[:, None]).float()
        inter = 1 + ex + n_ex * corr.long()                        # 1..2n_ex
        prev = torch.cat([torch.full((bs, 1), 2 * n_ex + 1), inter[:, :-1]], 1)
        ex_in = (ex + 1) * mask.long()
        prev = prev * mask.long()
        prev[:, 0] = 2 * n_ex + 1                                  # start token always present
        batches.append(((ex_in, prev), torch.stack([corr, mask], -1)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=masked_bce, batches=batches, steps=steps)
