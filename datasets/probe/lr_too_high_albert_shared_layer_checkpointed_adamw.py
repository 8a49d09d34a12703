"""ALBERT-style encoder: factorized token embedding, ONE post-LN transformer layer whose weights are
shared across all 6 applications, each application wrapped in activation checkpointing
(torch.utils.checkpoint.checkpoint(..., use_reentrant=False)). The shared layer receives the sum of
6 gradient contributions, and AdamW runs at a BERT-from-scratch-style lr of ~1e-2 without warmup:
the updates overshoot, attention/FFN weights blow up and the classifier collapses to a constant
prediction (loss stalls at chance). fixed=True: the same run with lr 2e-3.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("ALBERT (Lan et al. 2020) cross-layer parameter sharing; reports of ALBERT/BERT pretraining "
          "diverging or collapsing to a constant prediction when the lr is too high without warmup "
          "(google-research/albert issues, HF forums 'ALBERT loss not decreasing')")

VOCAB = 256
N_TOPICS = 4
SEQ = 20
BATCH = 16
HIDDEN = 32
N_APPLY = 6
STEPS = 120


class SharedLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(HIDDEN, 4, batch_first=True)
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU(), nn.Linear(4 * HIDDEN, HIDDEN))
        self.ln2 = nn.LayerNorm(HIDDEN)

    def forward(self, h):
        a, _ = self.attn(h, h, h, need_weights=False)
        h = self.ln1(h + a)
        return self.ln2(h + self.ffn(h))


class Albert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 16)
        self.pos = nn.Parameter(torch.randn(SEQ, 16) * 0.02)
        self.proj = nn.Linear(16, HIDDEN)          # factorized embedding E=16 -> H=32
        self.layer = SharedLayer()                 # one set of weights, applied N_APPLY times
        self.head = nn.Linear(HIDDEN, N_TOPICS)

    def forward(self, ids):
        h = self.proj(self.tok(ids) + self.pos)
        for _ in range(N_APPLY):
            h = checkpoint(self.layer, h, use_reentrant=False)
        return self.head(h.mean(1))


def _make_batches(seed):
    g = torch.Generator().manual_seed(seed)
    topic_of = torch.randint(0, N_TOPICS, (VOCAB,), generator=g)
    topic_of[: VOCAB // 2] = -1                   # half of the vocabulary is topic-neutral filler
    by_topic = [torch.nonzero(topic_of == t).flatten() for t in range(N_TOPICS)]
    filler = torch.nonzero(topic_of == -1).flatten()
    batches = []
    for _ in range(STEPS):
        y = torch.randint(0, N_TOPICS, (BATCH,), generator=g)
        ids = filler[torch.randint(0, len(filler), (BATCH, SEQ), generator=g)]
        # 4-7 words of the label topic and 2 distractor words of another topic, at random positions
        n_sig = torch.randint(4, 8, (BATCH, 1), generator=g)
        rank = torch.rand(BATCH, SEQ, generator=g).argsort(1).argsort(1)
        other = (y + 1 + torch.randint(0, N_TOPICS - 1, (BATCH,), generator=g)) % N_TOPICS
        sig_words = torch.stack([by_topic[int(t)][torch.randint(0, len(by_topic[int(t)]), (SEQ,), generator=g)] for t in y])
        oth_words = torch.stack([by_topic[int(t)][torch.randint(0, len(by_topic[int(t)]), (SEQ,), generator=g)] for t in other])
        ids = torch.where(rank < n_sig, sig_words, ids)
        ids = torch.where((rank >= n_sig) & (rank < n_sig + 2), oth_words, ids)
        batches.append((ids, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = Albert()
    g = torch.Generator().manual_seed(1000 + seed)
    lr = 2e-3 if fixed else float(8e-3 + 8e-3 * torch.rand(1, generator=g))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=optimizer, loss_fn=F.cross_entropy,
                batches=_make_batches(seed), steps=STEPS, amp_dtype=None, scaler=None)
