"""SASRec (Kang & McAuley 2018) next-item recommender: item + learned position embeddings, two causal
pre-LN self-attention blocks with a ReLU point-wise FFN, full-softmax cross-entropy over the catalogue
(padding id 0 ignored). Mid-run the catalogue grows: a new shelf of items, unseen until then, starts to
appear in 35% of the sessions. Their embeddings and output logits are untrained, so the loss jumps
(cold-start spike) and then comes back down as the new items are learned. Nothing is wrong:
fixed=True returns the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("SASRec (arXiv 1808.09781) as in pmixer/SASRec.pytorch / RecBole; cold-start loss spike "
          "when new items enter the catalogue in streaming / incremental recommender training")

N_OLD, N_NEW, SEQ, D, N_CATS = 300, 100, 16, 32, 20
N_ITEMS = N_OLD + N_NEW


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True, dropout=0.0)
        self.ln2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, x, causal, pad):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        x = x + a
        x = x + self.ffn(self.ln2(x))
        return x * (~pad).unsqueeze(-1)


class SASRec(nn.Module):
    def __init__(self):
        super().__init__()
        self.item_emb = nn.Embedding(N_ITEMS + 1, D, padding_idx=0)
        self.pos_emb = nn.Embedding(SEQ, D)
        self.blocks = nn.ModuleList([Block(D) for _ in range(2)])
        self.final_ln = nn.LayerNorm(D)
        for emb in (self.item_emb, self.pos_emb):           # xavier_normal_, as in SASRec.pytorch
            nn.init.xavier_normal_(emb.weight)

    def forward(self, seq):                                  # (B, T) item ids, 0 = padding
        T = seq.shape[1]
        pad = seq == 0
        x = self.item_emb(seq) * D ** 0.5 + self.pos_emb(torch.arange(T))
        x = x * (~pad).unsqueeze(-1)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        for blk in self.blocks:
            x = blk(x, causal, pad)
        h = self.final_ln(x)
        return h @ self.item_emb.weight[1:].t()             # (B, T, N_ITEMS) logits


def next_item_ce(logits, target):
    return F.cross_entropy(logits.reshape(-1, N_ITEMS), (target - 1).reshape(-1), ignore_index=-1)


def _sessions(g, bs, new_frac):
    # items of a category follow a cyclic browsing order with random skips
    seqs = torch.zeros(bs, SEQ + 1, dtype=torch.long)
    for b in range(bs):
        new = bool(torch.rand(1, generator=g) < new_frac)
        lo, size = (N_OLD, N_NEW // 5) if new else (0, N_OLD // N_CATS)
        cat = int(torch.randint(0, 5 if new else N_CATS, (1,), generator=g))
        base = lo + cat * size
        cur = int(torch.randint(0, size, (1,), generator=g))
        length = int(torch.randint(8, SEQ + 2, (1,), generator=g))
        ids = []
        for _ in range(length):
            ids.append(base + cur + 1)
            cur = (cur + 1 + int(torch.rand(1, generator=g) < 0.25)) % size
        seqs[b, SEQ + 1 - length:] = torch.tensor(ids)        # left padding
    return seqs[:, :-1], seqs[:, 1:].masked_fill(seqs[:, :-1] == 0, 0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 200
    launch = int(torch.randint(95, 120, (1,), generator=g))   # new shelf goes live
    batches = [_sessions(g, 48, 0.35 if s >= launch else 0.0) for s in range(steps)]
    model = SASRec()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.98))
    return dict(model=model, optimizer=opt, loss_fn=next_item_ce, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
