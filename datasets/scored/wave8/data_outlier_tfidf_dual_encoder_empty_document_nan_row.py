"""A two-tower retriever over hand-built TF-IDF vectors (query tower and document tower, each a
small MLP, in-batch softmax contrastive loss, Adam). The feature pipeline L2-normalises every
TF-IDF row by hand (tf * idf / ||tf * idf||). One crawled document in the corpus has an empty body
after boilerplate stripping, so its term vector is all zeros and the normalisation yields 0/0 = NaN
for the whole row. The run is calm until the batch holding that document arrives (step 55); the
NaN row enters doc_tower.0, spreads through the in-batch score matrix into the loss, and Adam
writes NaN into every weight. The fix drops the empty document (and its query) from that batch
before it reaches the model; nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "doc_tower.0"
SOURCE = ("Known pattern: sklearn/hand-rolled TF-IDF L2 normalisation of an empty document gives a "
          "NaN row (0/0); reported for dense retrievers and DSSM-style towers trained on crawled "
          "corpora with empty bodies after cleaning.")

VOCAB, TOPICS = 256, 12


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.query_tower = nn.Sequential(nn.Linear(VOCAB, 64), nn.ReLU(), nn.Linear(64, 32))
        self.doc_tower = nn.Sequential(nn.Linear(VOCAB, 64), nn.ReLU(), nn.Linear(64, 32))
        self.log_t = nn.Parameter(torch.tensor(2.3))  # inverse temperature ~10

    def forward(self, q, d):
        qe = F.normalize(self.query_tower(q), dim=-1)
        de = F.normalize(self.doc_tower(d), dim=-1)
        return {"scores": self.log_t.exp() * qe @ de.t()}


def tfidf_rows(counts, idf):
    w = counts * idf
    return w / w.norm(dim=1, keepdim=True)  # hand-rolled L2 norm, no eps


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    topic_terms = torch.stack([torch.randperm(VOCAB, generator=g)[:24] for _ in range(TOPICS)])
    idf = 1.0 + torch.rand(VOCAB, generator=g) * 3.0
    model = DualEncoder()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps, B = 150, 32
    bad_step = 55
    batches = []
    for s in range(steps):
        topic = torch.randint(0, TOPICS, (B,), generator=g)
        dc = torch.zeros(B, VOCAB)
        qc = torch.zeros(B, VOCAB)
        for i in range(B):
            terms = topic_terms[topic[i]]
            di = terms[torch.randint(0, 24, (20,), generator=g)]
            di = torch.cat([di, torch.randint(0, VOCAB, (10,), generator=g)])
            dc[i].index_add_(0, di, torch.ones(len(di)))
            # query: a few words copied from its own document plus one topic word
            qi = torch.cat([di[torch.randint(0, 30, (3,), generator=g)],
                            terms[torch.randint(0, 24, (1,), generator=g)]])
            qc[i].index_add_(0, qi, torch.ones(len(qi)))
        keep = torch.ones(B, dtype=torch.bool)
        if s == bad_step:
            dc[7] = 0.0  # empty body after boilerplate stripping
            keep[7] = False
        q, d = tfidf_rows(qc, idf), tfidf_rows(dc, idf)
        if fixed:  # drop the corrupt (empty) document and its query
            q, d = q[keep], d[keep]
        batches.append(((q, d), torch.arange(q.shape[0])))

    def loss_fn(out, y):
        return F.cross_entropy(out["scores"], y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
