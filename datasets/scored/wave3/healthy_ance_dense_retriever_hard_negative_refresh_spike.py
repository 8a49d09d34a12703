"""Dense passage retriever (mean-pooled token embeddings -> MLP tower, shared by queries and
passages) trained with a contrastive loss over in-batch negatives plus one mined hard negative per
query, ANCE-style: the negative pool is periodically refreshed with the current model.  For the
first phase negatives are random passages; at the refresh step the pool is replaced by hard
negatives (passages of a sibling topic sharing most of their vocabulary, initially almost as close
to the query as the positive), so the loss jumps up at once, then recovers and keeps falling as the model learns the distinguishing terms.  The spike is
the expected, healthy consequence of a harder negative distribution, not a divergence."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "ANCE (Xiong et al., ICLR 2021) asynchronous hard-negative refresh: loss jumps at each index refresh, then recovers"


class Tower(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))

    def forward(self, ids):
        m = (ids > 0).float().unsqueeze(-1)
        return F.normalize(self.mlp((self.emb(ids) * m).sum(1) / m.sum(1).clamp_min(1)), dim=-1)


class Retriever(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.tower = Tower(vocab, d)

    def forward(self, q, p, hard):
        qe, pe, he = self.tower(q), self.tower(p), self.tower(hard)
        return {"scores": qe @ torch.cat([pe, he]).t() / 0.05}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, bs, steps, refresh = [(32, 32, 200, 80), (48, 24, 240, 110), (32, 32, 180, 60)][seed % 3]
    vocab, families, p_len = 800, 40, 20
    # topic pairs (siblings) share a family vocabulary and differ by 6 specific words each
    fam_words = torch.stack([1 + torch.randperm(vocab - 1, generator=g)[:24] for _ in range(families)])
    spec_words = torch.stack([1 + torch.randperm(vocab - 1, generator=g)[:6] for _ in range(2 * families)])
    def passage(topic, n):
        fam = fam_words[topic // 2]
        f = torch.gather(fam, 1, torch.randint(0, 24, (len(topic), n), generator=g))
        s = torch.gather(spec_words[topic], 1, torch.randint(0, 6, (len(topic), n), generator=g))
        return torch.where(torch.rand(len(topic), n, generator=g) < 0.3, s, f)
    model = Retriever(vocab, d)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    batches = []
    for step in range(steps):
        fam = torch.randperm(families, generator=g)[:bs]
        topic = 2 * fam + torch.randint(0, 2, (bs,), generator=g)
        q, p = passage(topic, 6), passage(topic, p_len)
        if step < refresh:
            hard = passage(torch.randint(0, 2 * families, (bs,), generator=g), p_len)
        else:  # refreshed pool: sibling topic of the same family
            hard = passage(topic ^ 1, p_len)
        batches.append(((q, p, hard), torch.arange(bs)))
    loss_fn = lambda o, y: F.cross_entropy(o["scores"], y)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
