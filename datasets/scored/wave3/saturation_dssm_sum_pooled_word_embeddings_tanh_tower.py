"""DSSM-style two-tower retrieval model whose document tower sum-pools (instead of mean-pools) word
embeddings of long documents before a dense tanh layer.  nn.Embedding rows have unit variance, so the
sum over L tokens has a standard deviation of about sqrt(L); the first dense layer then produces
pre-activations of several units and every tanh in the document tower sits on its flat +-1 plateau.
The cosine similarities barely change, the tanh derivative is ~0 and plain SGD makes no progress: a
silent stall with finite losses.  Function words (ids 0-5) make up most of each document, so the
sum-pooled vector is dominated by one shared direction and every document lands on the same saturated code.  Fixed: mean pooling, i.e. pre-activations of normal size."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "d_tower.fc"
SOURCE = "DSSM / two-tower retrieval reports where sum pooling of token embeddings saturates tanh towers (use mean pooling or normalise)"


class Tower(nn.Module):
    def __init__(self, vocab, dim, out, mean_pool):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, out)
        self.out = nn.Linear(out, out)
        self.mean_pool = mean_pool

    def forward(self, ids):
        e = self.emb(ids)
        pooled = e.mean(1) if self.mean_pool else e.sum(1)
        return torch.tanh(self.out(torch.tanh(self.fc(pooled))))


class DSSM(nn.Module):
    def __init__(self, vocab, dim, out, mean_pool):
        super().__init__()
        self.q_tower = Tower(vocab, dim, out, True)
        self.d_tower = Tower(vocab, dim, out, mean_pool)

    def forward(self, q, d):
        qe = F.normalize(self.q_tower(q), dim=-1)
        de = F.normalize(self.d_tower(d), dim=-1)
        return 10.0 * qe @ de.t()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    dim, out, doc_len, bs, lr, steps = [(32, 32, 60, 32, 0.8, 200), (48, 32, 80, 24, 0.4, 150), (32, 48, 100, 32, 0.5, 100)][seed % 3]
    vocab, topics = 600, 48
    words = torch.stack([6 + torch.randperm(vocab - 6, generator=g)[:25] for _ in range(topics)])
    model = DSSM(vocab, dim, out, mean_pool=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for _ in range(steps):
        t = torch.randperm(topics, generator=g)[:bs]
        q = torch.gather(words[t], 1, torch.randint(0, 25, (bs, 6), generator=g))
        d = torch.gather(words[t], 1, torch.randint(0, 25, (bs, doc_len), generator=g))
        stop = torch.rand(bs, doc_len, generator=g) < 0.6  # function words make up most of a long document
        d = torch.where(stop, torch.randint(0, 6, (bs, doc_len), generator=g), d)
        batches.append(((q, d), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
