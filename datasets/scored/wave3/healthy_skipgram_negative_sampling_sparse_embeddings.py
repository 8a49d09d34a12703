"""word2vec skip-gram with negative sampling: input ('center') and output ('context') embedding
tables with sparse=True gradients, trained with plain SGD as in the original C tool.  Things that
look alarming but are normal: the output table is initialised to exactly zero (so at step 0 every
logit is 0, the loss is exactly (1+k)*log 2 and the input table receives zero gradient), the gradients
are sparse tensors touching only the few dozen rows in the batch while the vast majority of rows get
no update at all, and the loss is noisy because negatives are resampled every step.  The loss still
falls steadily well below its starting value."""
import math, torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "word2vec (Mikolov et al. 2013) SGNS: zero-initialised output vectors, sparse embedding updates"


class SGNS(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.center = nn.Embedding(vocab, dim, sparse=True)
        self.context = nn.Embedding(vocab, dim, sparse=True)
        nn.init.uniform_(self.center.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.context.weight)

    def forward(self, center, pos, neg):
        c = self.center(center)                                   # (B, d)
        pos_logit = (c * self.context(pos)).sum(-1)               # (B,)
        neg_logit = torch.einsum("bd,bkd->bk", c, self.context(neg))
        return pos_logit, neg_logit


def sgns_loss(out, _y):
    pos_logit, neg_logit = out
    return (F.softplus(-pos_logit) + F.softplus(neg_logit).sum(-1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    dim, bs, k, lr, steps = [(32, 256, 5, 0.025, 150), (24, 192, 8, 0.03, 200), (48, 320, 5, 0.025, 120)][seed % 3]
    vocab, clusters = 800, 25
    cluster_of = torch.randint(0, clusters, (vocab,), generator=g)
    members = [torch.nonzero(cluster_of == c).squeeze(1) for c in range(clusters)]
    freq = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float32)
    noise = freq ** 0.75
    model = SGNS(vocab, dim)
    opt = torch.optim.SGD(model.parameters(), lr=lr * bs)  # per-example lr of the C tool; the loss is a batch mean
    batches = []
    for _ in range(steps):
        center = torch.multinomial(freq, bs, replacement=True, generator=g)
        pos = torch.stack([members[int(cluster_of[c])][torch.randint(0, len(members[int(cluster_of[c])]), (1,), generator=g)][0]
                           for c in center])
        neg = torch.multinomial(noise, bs * k, replacement=True, generator=g).view(bs, k)
        batches.append(((center, pos, neg), torch.zeros(bs)))
    return dict(model=model, optimizer=opt, loss_fn=sgns_loss, batches=batches, steps=steps, amp_dtype=None, scaler=None)
