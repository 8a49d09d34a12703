"""ColBERT-style late-interaction retriever: token ids -> embedding (padding_idx=0) -> 1D conv
contextualiser -> linear projection (no bias) -> per-token L2 normalisation written by hand as
x / x.norm(dim=-1, keepdim=True), then MaxSim (max over passage tokens of the dot product, summed over
query tokens) with passage padding masked out.  Most batches have passages of full length, but at
one step a batch contains a short passage padded to the batch length: a padded position far from any
real token has an exactly zero vector, its norm is 0 and 0/0 = NaN.  Masking by multiplication
(NaN*0) does not remove it, the scores and the loss are NaN.  Fixed: the norm is clamped with
clamp_min(1e-6) (as F.normalize does)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "p_norm"
SOURCE = "ColBERT (Khattab & Zaharia 2020) MaxSim; hand-written L2 normalisation without eps on padded tokens (0/0 NaN)"


class L2Norm(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        n = x.norm(dim=-1, keepdim=True)
        return x / (n.clamp_min(self.eps) if self.eps else n)


class ColBERTLite(nn.Module):
    def __init__(self, vocab, d, out, eps):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.ctx = nn.Conv1d(d, d, 3, padding=1, bias=False)
        self.proj = nn.Linear(d, out, bias=False)
        self.q_norm = L2Norm(eps)
        self.p_norm = L2Norm(eps)

    def encode(self, ids):
        e = self.emb(ids)
        return self.proj(e + self.ctx(e.transpose(1, 2)).transpose(1, 2))

    def forward(self, q_ids, p_ids, p_mask):
        q = self.q_norm(self.encode(q_ids))                    # (B, Lq, out)
        p = self.p_norm(self.encode(p_ids)) * p_mask[..., None]  # (B, Lp, out)
        sim = torch.einsum("aqd,bpd->abqp", q, p)
        sim = sim - 1e4 * (1 - p_mask)[None, :, None, :]
        return sim.max(-1).values.sum(-1)                       # (B queries, B passages)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, out, bs, p_len, steps, short_step = [(32, 24, 16, 24, 80, 41), (24, 16, 24, 20, 100, 63), (32, 32, 16, 28, 60, 25)][seed % 3]
    vocab, topics, q_len = 400, 40, 6
    # questions and passages use different vocabularies ("how do I ..." vs the answer's terms)
    q_words = torch.stack([1 + torch.randperm(199, generator=g)[:20] for _ in range(topics)])
    words = torch.stack([200 + torch.randperm(200, generator=g)[:20] for _ in range(topics)])
    model = ColBERTLite(vocab, d, out, eps=1e-6 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    batches = []
    for step in range(steps):
        t = torch.randperm(topics, generator=g)[:bs]
        q = torch.gather(q_words[t], 1, torch.randint(0, 20, (bs, q_len), generator=g))
        p = torch.gather(words[t], 1, torch.randint(0, 20, (bs, p_len), generator=g))
        mask = torch.ones(bs, p_len)
        if step == short_step:  # one passage in this batch is only 5 tokens long
            p[2, 5:] = 0
            mask[2, 5:] = 0
        batches.append(((q, p, mask), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o / 0.2, y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
