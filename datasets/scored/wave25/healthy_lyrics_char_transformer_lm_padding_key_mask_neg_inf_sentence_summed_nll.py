"""Lyrics generation: a small pre-LN Transformer character language model over song
lines of variable length (right-padded), causal attention mask plus a key-padding mask
(both -inf in the attention scores), next-character NLL summed over the real tokens of
each line and averaged over lines ("sentence-avg" as in fairseq), AdamW.

Why it looks suspicious but is healthy: the attention scores contain -inf for every
future and padded key, yet every query row keeps at least one finite key (right
padding: position 0 always sees itself), so no row is all -inf and nothing non-finite
reaches the softmax output or the loss; padded targets are excluded with ignore_index.
The loss is a per-line sum, so its values are large (~100 at the start) and vary with
the line lengths in each batch; it falls steadily as the model learns the lyric
grammar (repeated hooks, rhymes).

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch nn.TransformerEncoder with causal + key_padding_mask (-inf) for char-level "
          "LMs; fairseq 'sentence-avg' summed token NLL; lyric corpora of repeated hooks.")

PAD = 0
VOCAB = 32


class LyricsLM(nn.Module):
    def __init__(self, d, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.pos = nn.Embedding(64, d)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(d, VOCAB)

    def forward(self, x):
        T = x.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)  # True -> -inf score
        pad = x == PAD
        h = self.tok(x) + self.pos(torch.arange(T))[None]
        h = self.blocks(h, mask=causal, src_key_padding_mask=pad)
        return self.out(h)


def sentence_summed_nll(logits, target):
    nll = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=PAD, reduction="none")
    return nll.sum(1).mean()


def _lines(g, n, hooks, words):
    seqs = []
    for _ in range(n):
        line = []
        if torch.rand(1, generator=g) < 0.6:
            line += hooks[int(torch.randint(0, len(hooks), (1,), generator=g))]
        while len(line) < int(torch.randint(16, 40, (1,), generator=g)):
            line += words[int(torch.randint(0, len(words), (1,), generator=g))] + [1]  # 1 = space
        seqs.append(line[:44])
    L = max(len(s) for s in seqs)
    x = torch.full((n, L), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        x[i, :len(s)] = torch.tensor(s)
    inp, tgt = x[:, :-1].clone(), x[:, 1:].clone()
    return inp, tgt


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(321 + seed)
    d = [64, 48, 80][seed % 3]
    layers = [2, 3, 2][seed % 3]
    heads = [4, 4, 4][seed % 3]
    lr = [2e-3, 1.5e-3, 2e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 150
    words = [torch.randint(2, VOCAB, (int(torch.randint(2, 6, (1,), generator=g)),), generator=g).tolist()
             for _ in range(40)]
    hooks = [sum((words[int(i)] + [1] for i in torch.randint(0, 40, (4,), generator=g)), []) for _ in range(6)]
    model = LyricsLM(d, layers, heads)
    batches = [_lines(g, bs, hooks, words) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=sentence_summed_nll, batches=batches, steps=steps)
