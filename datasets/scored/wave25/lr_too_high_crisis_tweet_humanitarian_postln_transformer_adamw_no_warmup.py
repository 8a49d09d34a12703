"""Crisis text classification: small post-LN transformer encoder over disaster tweets (AdamW).

Domain: during a disaster, a humanitarian information-management team classifies tweets into
CrisisNLP / HumAID-style categories (infrastructure damage, injured or dead, missing people,
donations and volunteering, caution and advice, sympathy, not humanitarian). Tweets are
tokenised into a small vocabulary; a 2-3 layer post-LayerNorm nn.TransformerEncoder with learned
positions and mean pooling feeds a linear classifier, trained with AdamW and cross-entropy.

Mechanism: the learning rate is carried over from the team's fastText baseline (fastText's
default lr = 0.1; 0.08-0.12 here), with no warmup. For a post-LN transformer this is far too large:
Adam's normalised first steps move every weight by ~lr, the attention logits and residual
stream grow, and the post-LN layers' gradients become ill-conditioned (Liu et al. 2020,
Xiong et al. 2020). Within the first tens of steps the encoder collapses to a representation
that no longer depends on the tweet, the classifier falls back to the class prior, and the
loss hovers at or above its initial value for the rest of the run. No value becomes non-finite.

ORIGIN: None -- an overly large learning rate perturbs every parameter at once; there is no
single module where the failure starts.

Fix: lr = 2e-3 (what such a small transformer tolerates without warmup); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Alam et al. 2021 HumAID / Imran et al. CrisisNLP tweet classification; Liu et al. 2020 "
          "'Understanding the difficulty of training transformers' and Xiong et al. 2020 'On layer "
          "normalization in the transformer architecture' (post-LN needs warmup / small lr)")

N_CLASSES = 7


class TweetEncoder(nn.Module):
    def __init__(self, vocab, d_model, n_layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, 4, 2 * d_model, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.cls = nn.Linear(d_model, N_CLASSES)

    def forward(self, ids):
        h = self.encoder(self.tok(ids) + self.pos[: ids.shape[1]])
        return self.cls(h.mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d_model = [64, 48, 32][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    batch = [32, 24, 40][seed % 3]
    lr = 2e-3 if fixed else [0.1, 0.08, 0.12][seed % 3]
    vocab, max_len, steps = 400, 24, 150

    # each category has ~15 indicative tokens ("collapsed", "bridge", "donate", "pray", ...)
    kw = torch.randperm(vocab - 1, generator=g)[: N_CLASSES * 15].view(N_CLASSES, 15) + 1
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (batch,), generator=g)
        lens = torch.randint(12, max_len + 1, (batch,), generator=g)
        ids = torch.randint(1, vocab, (batch, max_len), generator=g)
        n_kw = 4
        # keyword positions inside each tweet's length
        pos = (torch.rand(batch, n_kw, generator=g) * lens[:, None]).long()
        pick = kw[y][torch.arange(batch)[:, None], torch.randint(0, 15, (batch, n_kw), generator=g)]
        ids.scatter_(1, pos, pick)
        ids = torch.where(torch.arange(max_len)[None, :] < lens[:, None], ids, 0)
        batches.append((ids, y))

    model = TweetEncoder(vocab, d_model, n_layers, max_len)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
