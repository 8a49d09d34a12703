"""A RankNet-style learning-to-rank model scores query-document pairs from LETOR/MSLR-style features
(BM25 of title and body, body term frequency, document length in tokens, raw PageRank, in-link
count, clicks, dwell time in seconds, impressions, URL depth, title length, query length) and is
trained with the pairwise logistic loss over all document pairs with different relevance grades in
each query's list (20 documents per query, grades 0-4), with SGD + momentum at lr 0.05. The features
are fed as stored in the dataset files: document length, impressions and PageRank in the thousands
to ~1e5, next to URL depth and BM25 of order 1-30. The first linear layer (scorer.0) turns them into
scores of order 1e2-1e3, the pairwise loss (linear in the score gap for mis-ordered pairs) starts in
the tens to hundreds, and its gradient w.r.t. scorer.0 is proportional to the raw feature values:
the first SGD step multiplies the weights by orders of magnitude, the loss reads ~1e8 at step 1 and
~1e25 at step 3, and the scores overflow to inf so that s_i - s_j = inf - inf gives NaN at step 4. The
fix standardises every feature (log1p for the count-like ones, then z-score with training-set
statistics), as the LETOR baselines do; model, loss, lr and optimiser are unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "scorer.0"
SOURCE = ("MSLR-WEB10K / LETOR 4.0 raw feature files (Qin & Liu 2013) need per-feature normalisation; "
          "RankNet (Burges et al. 2005) pairwise loss; allRank/TF-Ranking issues on unnormalised "
          "LTR features giving huge losses.")

L = 20
NF = 12
COUNT_LIKE = [2, 3, 4, 5, 6, 7, 8]


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scorer = nn.Sequential(nn.Linear(NF, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                    nn.Linear(32, 1))

    def forward(self, feats, mask):
        s = self.scorer(feats).squeeze(-1)
        return s, mask


def _queries(g, Q):
    rel_latent = torch.randn(Q, L, generator=g)
    grade = torch.clamp(torch.round(1.5 + 1.2 * rel_latent), 0, 4)
    r = rel_latent + 0.6 * torch.randn(Q, L, generator=g)
    bm25_title = torch.clamp(8 + 4 * r + 2 * torch.randn(Q, L, generator=g), min=0)
    bm25_body = torch.clamp(15 + 6 * r + 4 * torch.randn(Q, L, generator=g), min=0)
    tf_body = torch.exp(2 + 0.5 * r + 0.5 * torch.randn(Q, L, generator=g))
    doc_len = torch.exp(7 + 0.8 * torch.randn(Q, L, generator=g))
    pagerank = torch.exp(8 + 0.5 * r + 1.5 * torch.randn(Q, L, generator=g))
    inlinks = torch.exp(5 + 0.4 * r + 1.5 * torch.randn(Q, L, generator=g))
    clicks = torch.exp(4 + 0.8 * r + 1.0 * torch.randn(Q, L, generator=g))
    dwell = torch.exp(4 + 0.3 * r + 0.7 * torch.randn(Q, L, generator=g))
    imps = torch.exp(7 + 1.0 * torch.randn(Q, L, generator=g))
    url_depth = torch.randint(1, 8, (Q, L), generator=g).float()
    title_len = torch.randint(3, 20, (Q, L), generator=g).float()
    qlen = torch.randint(1, 6, (Q, 1), generator=g).float().expand(Q, L)
    feats = torch.stack([bm25_title, bm25_body, tf_body, doc_len, pagerank, inlinks, clicks, dwell,
                         imps, url_depth, title_len, qlen], -1)
    return feats, grade


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6600 + seed)
    feats, grade = _queries(g, 40 * 16)
    if fixed:
        f = feats.clone()
        f[..., COUNT_LIKE] = torch.log1p(f[..., COUNT_LIKE])
        flat = f.reshape(-1, NF)
        feats = (f - flat.mean(0)) / flat.std(0)
    mask = torch.ones(feats.shape[0], L, dtype=torch.bool)
    model = Scorer()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 150
    pool = [((feats[i * 16:(i + 1) * 16], mask[i * 16:(i + 1) * 16]), grade[i * 16:(i + 1) * 16])
            for i in range(40)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, grades):
        s, m = out
        ds = s.unsqueeze(2) - s.unsqueeze(1)                 # s_i - s_j
        dg = grades.unsqueeze(2) - grades.unsqueeze(1)
        pair = (dg > 0) & m.unsqueeze(2) & m.unsqueeze(1)
        return nn.functional.softplus(-ds)[pair].mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
