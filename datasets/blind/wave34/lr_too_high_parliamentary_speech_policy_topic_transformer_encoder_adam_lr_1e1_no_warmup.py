"""Text-as-data classifier for legislative speeches: a small Transformer encoder (token +
position embeddings, 2-3 post-LN encoder layers, mean pooling) assigns each speech snippet to
one of 8 Comparative Agendas Project major topics; cross-entropy, Adam, no warmup.

Mechanism (lr_too_high). lr = 0.1 was carried over from the bag-of-words logistic baseline
(where Adam at 0.1 converges fine). For a Transformer, Adam's per-parameter step of ~lr is
enormous relative to weights of scale 0.02-0.1: within the first steps the attention
logits and the embedding norms jump, LayerNorm outputs flip sign from step to step, and the
classifier is thrown between near one-hot predictions of different topics. The loss never
becomes non-finite, but it bounces at or above its starting level (about log 8) for the whole
run instead of falling: update/weight ratios stay near 1 instead of ~1e-3.

ORIGIN = None: overshooting updates are a property of the optimiser setting and hit every
module at once.

Fix: Adam lr = 2e-3 (the usual range for small Transformers). Same model, data, batches, steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Transformers trained with Adam without warmup at a too-large lr fail to train "
          "(Liu et al. 2020 'Understanding the difficulty of training Transformers'; Popel & "
          "Bojar 2018); CAP topic coding of parliamentary speeches (Comparative Agendas Project)")


class SpeechTopicEncoder(nn.Module):
    def __init__(self, vocab, d_model, n_layers, n_cls, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.cls = nn.Linear(d_model, n_cls)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        h = self.enc(self.tok(ids) + self.pos(pos))
        return self.cls(h.mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d_model = [32, 48, 64][seed % 3]
    n_layers = [2, 2, 3][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    steps = 150
    V, L, K = 300, 24, 8

    model = SpeechTopicEncoder(V, d_model, n_layers, K, L)
    topic_words = torch.stack([torch.randperm(V - 40, generator=g)[:25] + 40 for _ in range(K)])

    def sample(n):
        y = torch.randint(0, K, (n,), generator=g)
        ids = torch.randint(0, 40, (n, L), generator=g)            # function words
        mask = torch.rand(n, L, generator=g) < 0.4
        kw = topic_words[y][torch.arange(n)[:, None], torch.randint(0, 25, (n, L), generator=g)]
        ids = torch.where(mask, kw, ids)
        return ids, y

    batches = [sample(bs) for _ in range(steps)]
    if fixed:
        lr = 2e-3
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
