"""word2vec CBOW with negative sampling, PyTorch re-implementation. The context vector is the mean of the
non-padding context embeddings, computed as sum / mask.sum() (gensim guards `if count` before dividing;
this port does not). Training streams through the corpus in order: a wiki-style part first, then a
subtitle corpus that contains one-word lines ("Yes.", "Okay."). A one-word line has no context words,
so its count is 0 and the mean is 0/0 = NaN; loss and every embedding turn NaN mid-run.
fixed=True: the divisor is mask.sum().clamp_min(1) (an empty context gives a zero vector); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "context_mean"
SOURCE = ("word2vec CBOW (Mikolov et al. 2013, cbow_mean) ports to PyTorch that average context vectors "
          "with sum/mask.sum(); gensim's word2vec_inner checks `if cbow_mean and count` for empty windows; "
          "reports of NaN embeddings when the corpus has one-word sentences")

PAD = 0


class ContextMean(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed

    def forward(self, emb, mask):
        count = mask.sum(1, keepdim=True)
        if self.fixed:
            count = count.clamp_min(1.0)
        return (emb * mask.unsqueeze(-1)).sum(1) / count


class CBOW(nn.Module):
    def __init__(self, vocab, dim, fixed):
        super().__init__()
        self.in_embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.out_embed = nn.Embedding(vocab, dim)
        nn.init.uniform_(self.in_embed.weight, -0.5 / dim, 0.5 / dim)   # word2vec.c init
        nn.init.zeros_(self.out_embed.weight)
        with torch.no_grad():
            self.in_embed.weight[PAD].zero_()
        self.context_mean = ContextMean(fixed)

    def forward(self, ctx, center, negs):
        mask = (ctx != PAD).float()
        h = self.context_mean(self.in_embed(ctx), mask)               # (B, D)
        cand = torch.cat([center.unsqueeze(1), negs], 1)               # (B, 1+K)
        return torch.einsum("bd,bkd->bk", h, self.out_embed(cand))     # logits


def _sentences(g, n_sent, topics, min_len, max_len, p_one, V):
    out = []
    for _ in range(n_sent):
        if p_one > 0 and torch.rand(1, generator=g).item() < p_one:
            L = 1
        else:
            L = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
        t = int(torch.randint(0, topics.shape[0], (1,), generator=g))
        words = torch.multinomial(topics[t], L, replacement=True, generator=g) + 1
        out.append(words.tolist())
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    V, D, K, window, bs = 400, 48, 5, 2, 128
    n_topics = 12
    # topic-word distributions over V-1 real words (index 0 is padding), Zipf background
    zipf = 1.0 / torch.arange(1, V).float()
    topics = torch.stack([zipf * (1 + 30 * (torch.rand(V - 1, generator=g) < 0.05).float())
                          for _ in range(n_topics)])
    topics = topics / topics.sum(1, keepdim=True)
    n_wiki = 1500 + 150 * (seed % 4)                   # prose first (no one-word lines)
    sents = _sentences(g, n_wiki, topics, 5, 14, 0.0, V) + _sentences(g, 5000, topics, 2, 8, 0.08, V)
    ctxs, centers = [], []
    for s in sents:
        for i, w in enumerate(s):
            c = [s[j] if 0 <= j < len(s) else PAD for j in range(i - window, i + window + 1) if j != i]
            ctxs.append(c); centers.append(w)
    ctxs = torch.tensor(ctxs); centers = torch.tensor(centers)
    counts = torch.bincount(centers, minlength=V).float()
    noise = counts.pow(0.75); noise[PAD] = 0; noise = noise / noise.sum()
    steps = 240
    batches = []
    for s in range(steps):                           # stream through the corpus in order
        sl = slice(s * bs, (s + 1) * bs)
        negs = torch.multinomial(noise, bs * K, replacement=True, generator=g).view(bs, K)
        labels = torch.zeros(bs, 1 + K); labels[:, 0] = 1
        batches.append(((ctxs[sl], centers[sl], negs), labels))
    model = CBOW(V, D, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = lambda logits, y: F.binary_cross_entropy_with_logits(logits, y, reduction="sum") / logits.shape[0]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
