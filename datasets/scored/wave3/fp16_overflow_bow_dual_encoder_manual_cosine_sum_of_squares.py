"""Bag-of-words dual encoder for passage retrieval: a query or passage is its term-count vector times
an embedding table (counts @ E, i.e. sum pooling of nn.Embedding rows), and relevance is the cosine
similarity written by hand as dot / sqrt(sum of squares).  Under float16 autocast the matmul output
is half precision; for long passages (hundreds to thousands of tokens) the per-dimension sums are
~50-100, so sum(x*x) passes 65504 and becomes inf.  The passage norm is inf, every passage vector
divides to exactly 0, all similarities are 0 and every gradient through them is 0: the in-batch
softmax loss sits at log(batch) with no NaN (a silent stall).  Fixed: bfloat16 autocast (same code,
8-bit exponent range), so the sum of squares is representable."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "passage_encoder"
SOURCE = "fp16 overflow of hand-written norms / sum of squares (HF T5 'keep layer norm variance in fp32', apex amp FAQ); BOW dual encoders with sum pooling"


class BowEncoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, counts):
        x = counts @ self.table.weight            # sum pooling as one matmul (autocast -> fp16)
        return x / (x * x).sum(-1, keepdim=True).sqrt()


class DualEncoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.query_encoder = BowEncoder(vocab, dim)
        self.passage_encoder = BowEncoder(vocab, dim)

    def forward(self, q_counts, p_counts):
        return 20.0 * self.query_encoder(q_counts) @ self.passage_encoder(p_counts).t()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    dim, bs, p_len, lr, steps = [(64, 32, 3000, 0.05, 100), (48, 24, 2500, 0.05, 120), (64, 32, 4000, 0.04, 80)][seed % 3]
    vocab, topics = 500, 64
    words = torch.stack([torch.randperm(vocab, generator=g)[:30] for _ in range(topics)])
    model = DualEncoder(vocab, dim)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        t = torch.randperm(topics, generator=g)[:bs]
        q_ids = torch.gather(words[t], 1, torch.randint(0, 30, (bs, 8), generator=g))
        p_ids = torch.gather(words[t], 1, torch.randint(0, 30, (bs, p_len), generator=g))
        noise = torch.rand(bs, p_len, generator=g) < 0.5
        p_ids = torch.where(noise, torch.randint(0, vocab, (bs, p_len), generator=g), p_ids)
        qc = torch.zeros(bs, vocab).scatter_add_(1, q_ids, torch.ones(bs, 8))
        pc = torch.zeros(bs, vocab).scatter_add_(1, p_ids, torch.ones(bs, p_len))
        batches.append(((qc, pc), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y), batches=batches,
                steps=steps, amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
