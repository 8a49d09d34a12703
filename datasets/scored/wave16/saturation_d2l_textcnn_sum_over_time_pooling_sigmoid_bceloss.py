"""d2l.ai "Sentiment Analysis: Using Convolutional Neural Networks" (textCNN) where the student
replaced the average-over-time pooling by a *sum* over time and used a single sigmoid output with
``nn.BCELoss`` for the binary sentiment.

Mechanism
---------
d2l's TextCNN pools every Conv1d channel with ``nn.AdaptiveAvgPool1d(1)`` (followed by ReLU) and
decodes with ``nn.Linear(sum(num_channels), 2)`` + cross-entropy.  The student wanted long reviews
to "count more" and pooled with ``relu(conv(x)).sum(dim=2)``, then ``nn.Linear(.., 1)`` +
``nn.Sigmoid()`` + ``nn.BCELoss()``, trained with SGD + momentum.  The ReLU outputs are non-negative, so the summed features
grow with the review length (150..300 tokens): every feature is ~20..80 and the logit of every
review is a large number of the same sign (|z| >> 17).  In float32 ``sigmoid(z)`` is then exactly
0 or 1: BCELoss clamps the log at -100, and the gradient through the saturated sigmoid is
exactly zero for the confidently-wrong reviews and ~0 for the others.  After the first momentum
steps every logit is pinned, nothing upstream of the sigmoid receives a gradient, and the loss
sits at ~50 (the wrong half of the reviews at the clamped 100) for the rest of the run.

ORIGIN
------
"out_act" -- the output nn.Sigmoid, which is pinned at 0/1 by the huge summed features.

Fix
---
fixed=True pools with the mean over time (d2l's AdaptiveAvgPool1d); embedding, convolutions,
decoder, sigmoid/BCELoss, optimizer and data are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("d2l.ai 16.3 Sentiment Analysis: Using CNNs (TextCNN with AdaptiveAvgPool1d); student "
          "variant with sum-over-time pooling and Sigmoid+BCELoss -- 'BCE loss stuck at 50' reports")


class TextCNN(nn.Module):
    def __init__(self, vocab_size, embed_size, kernel_sizes, num_channels, sum_pool):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.dropout = nn.Dropout(0.5)
        self.decoder = nn.Linear(sum(num_channels), 1)
        self.out_act = nn.Sigmoid()
        self.relu = nn.ReLU()
        self.convs = nn.ModuleList(nn.Conv1d(embed_size, c, k) for c, k in zip(num_channels, kernel_sizes))
        self.sum_pool = sum_pool

    def forward(self, inputs):
        embeddings = self.embedding(inputs).permute(0, 2, 1)        # (batch, embed, steps)
        feats = []
        for conv in self.convs:
            h = self.relu(conv(embeddings))
            feats.append(h.sum(dim=2) if self.sum_pool else h.mean(dim=2))
        encoding = torch.cat(feats, dim=1)
        return self.out_act(self.decoder(self.dropout(encoding))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(700 + seed)
    vocab = [2000, 1500, 3000][seed % 3]
    embed = [50, 64, 32][seed % 3]
    kernel_sizes, num_channels = [([3, 4, 5], [32, 32, 32]), ([3, 5], [48, 48]), ([2, 3, 4], [24, 24, 24])][seed % 3]
    bs = [32, 48, 32][seed % 3]
    seq_len = [200, 150, 300][seed % 3]
    lr = [0.1, 0.05, 0.1][seed % 3]
    steps = 80

    # sentiment-bearing words: a positive and a negative lexicon, plus neutral filler
    perm = torch.randperm(vocab - 1, generator=g) + 1
    pos_words, neg_words = perm[:40], perm[40:80]
    batches = []
    for _ in range(steps):
        y = torch.randint(0, 2, (bs,), generator=g)
        toks = torch.randint(1, vocab, (bs, seq_len), generator=g)
        n_sent = seq_len // 4
        idx = torch.randint(0, seq_len, (bs, n_sent), generator=g)
        lex = torch.where(y[:, None] == 1,
                          pos_words[torch.randint(0, 40, (bs, n_sent), generator=g)],
                          neg_words[torch.randint(0, 40, (bs, n_sent), generator=g)])
        toks.scatter_(1, idx, lex)
        batches.append((toks, y.float()))

    model = TextCNN(vocab, embed, kernel_sizes, num_channels, sum_pool=not fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
