"""ColBERT late-interaction retriever distilled from a cross-encoder with Margin-MSE.

Query and passages share a small encoder (token embedding + one Transformer encoder layer +
linear projection to a low-dim space, L2-normalised per token).  The relevance score is ColBERT's
MaxSim: for every query token take the max dot product over passage tokens and sum.  Training
follows Hofstaetter et al.'s Margin-MSE: the student margin s(q,d+) - s(q,d-) is regressed onto
the teacher margin taken from cached cross-encoder scores (relevant passages paraphrase the
query: same concepts, other surface forms, which the student has to learn to match).

Mechanism: the teacher scores are attached to the training triples with a pandas left join on
(qid, pid).  One shard of triples references passages that were never scored by the teacher run,
so the join leaves NaN teacher scores for those rows.  The run is perfectly calm until that shard
arrives mid-training; its NaN teacher margins make the MSE NaN, the backward pass writes NaN into
every gradient and AdamW propagates them into the weights.

ORIGIN: None -- the NaNs enter through the regression targets in the loss, not through any module.

Fix: drop the triples whose teacher score is missing (``df.dropna()`` after the join), i.e. the
corrupt rows of that one batch are filtered out.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Margin-MSE cross-architecture distillation (Hofstaetter et al. 2020) for ColBERT; "
          "teacher score files merged onto MS MARCO triples with a left join leaving NaN scores "
          "for unscored passages")


class ColBERT(nn.Module):
    def __init__(self, vocab, d_model, dim, nhead):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(1, 32, d_model))
        self.encoder = nn.TransformerEncoderLayer(d_model, nhead, 2 * d_model, dropout=0.0,
                                                  batch_first=True)
        self.proj = nn.Linear(d_model, dim, bias=False)

    def encode(self, ids):
        h = self.encoder(self.emb(ids) + self.pos[:, : ids.shape[1]])
        return F.normalize(self.proj(h), dim=-1)

    def maxsim(self, q, d):
        return torch.einsum("bqd,bkd->bqk", q, d).max(dim=-1).values.sum(dim=-1)

    def forward(self, q_ids, pos_ids, neg_ids):
        q = self.encode(q_ids)
        return self.maxsim(q, self.encode(pos_ids)) - self.maxsim(q, self.encode(neg_ids))


def margin_mse(student_margin, teacher_margin):
    return F.mse_loss(student_margin, teacher_margin)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=48, dim=24, lr=3e-3, bs=32, steps=120, bad=71),
           dict(d=64, dim=32, lr=2e-3, bs=24, steps=110, bad=48),
           dict(d=32, dim=16, lr=4e-3, bs=40, steps=130, bad=93)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    vocab, lq, ld, n_concept = 80, 4, 8, 40

    model = ColBERT(vocab, cfg["d"], cfg["dim"], 4)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)

    def make_passage(q, n_hit, bs):
        p = torch.randint(0, vocab, (bs, ld), generator=g)
        for b in range(bs):
            k = int(n_hit[b])
            if k:
                slots = torch.randperm(ld, generator=g)[:k]
                src = q[b, torch.randperm(lq, generator=g)[:k]]
                shift = n_concept * torch.randint(1, vocab // n_concept, (k,), generator=g)
                p[b, slots] = (src + shift) % vocab        # paraphrase: same concept, other surface form
        return p

    batches = []
    bs = cfg["bs"]
    for step in range(cfg["steps"]):
        q = torch.randint(0, vocab, (bs, lq), generator=g)
        hit_pos = torch.randint(3, lq + 1, (bs,), generator=g)
        hit_neg = torch.randint(0, 3, (bs,), generator=g)
        pos, neg = make_passage(q, hit_pos, bs), make_passage(q, hit_neg, bs)
        t_pos = 0.6 * hit_pos.float() + 0.2 * torch.randn(bs, generator=g)   # cross-encoder logits
        t_neg = 0.6 * hit_neg.float() + 0.2 * torch.randn(bs, generator=g)
        if step == cfg["bad"]:
            missing = torch.rand(bs, generator=g) < 0.4
            missing[0] = True
            t_neg = torch.where(missing, torch.full_like(t_neg, float("nan")), t_neg)  # unmatched join
            if fixed:                       # df.dropna() after the merge
                keep = ~missing
                q, pos, neg, t_pos, t_neg = q[keep], pos[keep], neg[keep], t_pos[keep], t_neg[keep]
        batches.append(((q, pos, neg), t_pos - t_neg))
    return dict(model=model, optimizer=opt, loss_fn=margin_mse, batches=batches, steps=cfg["steps"])
