"""A query/passage two-tower retriever: each tower is an EmbeddingBag (mean of token
embeddings) -> Linear -> GELU -> projection Linear, the relevance score is the dot product of the
two projected vectors and training uses in-batch-negative softmax cross-entropy with AdamW. Copying
the "zero-initialise the last layer so the model starts neutral" trick (ReZero, ControlNet zero
convs, LoRA's B=0), the author zero-initialises the projection layer of BOTH towers. The score
q.d is then bilinear in two all-zero matrices: dL/dW_q is proportional to the document vectors
(= 0) and dL/dW_d to the query vectors (= 0), so neither projection nor anything below it ever
receives a non-zero gradient. LoRA works because only one factor is zero; with both zero the run
sits exactly on a saddle: every score is 0 and the loss is log(batch) at every step, finite and
perfectly flat. The fix restores the default (Kaiming-uniform) initialisation of the two
projection layers; everything else is identical."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "query_tower.proj"
SOURCE = ("Zero-initialisation tricks (ReZero, ControlNet zero-conv, LoRA B=0) misapplied to both "
          "factors of a bilinear score; DPR/two-tower retrievers reporting 'loss stuck at "
          "log(batch_size), gradients exactly zero'.")

V, E, D, B = 500, 32, 32, 32


class Tower(nn.Module):
    def __init__(self, zero_proj):
        super().__init__()
        self.bag = nn.EmbeddingBag(V, E, mode="mean", padding_idx=0)
        self.hidden = nn.Linear(E, 64)
        self.proj = nn.Linear(64, D)
        if zero_proj:
            nn.init.zeros_(self.proj.weight)
            nn.init.zeros_(self.proj.bias)

    def forward(self, ids):
        return self.proj(F.gelu(self.hidden(self.bag(ids))))


class TwoTower(nn.Module):
    def __init__(self, zero_proj):
        super().__init__()
        self.query_tower = Tower(zero_proj)
        self.doc_tower = Tower(zero_proj)

    def forward(self, q, d):
        return self.query_tower(q) @ self.doc_tower(d).t()


def make_batch(g, topic_words):
    q = torch.zeros(B, 6, dtype=torch.long)
    d = torch.zeros(B, 24, dtype=torch.long)
    for i in range(B):
        t = int(torch.randint(0, topic_words.shape[0], (1,), generator=g))
        words = topic_words[t]
        doc = torch.cat([words[torch.randint(0, 20, (16,), generator=g)],
                         torch.randint(1, V, (8,), generator=g)])
        d[i] = doc
        q[i, :4] = doc[torch.randint(0, 24, (4,), generator=g)]
    return q, d


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    topic_words = torch.stack([torch.randperm(V - 1, generator=g)[:20] + 1 for _ in range(40)])
    model = TwoTower(zero_proj=not fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    steps = 200
    batches = []
    for _ in range(steps):
        q, d = make_batch(g, topic_words)
        batches.append(((q, d), torch.arange(B)))

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
