"""Barlow Twins on token sequences (e.g. event logs / short texts): a 1-2 layer
TransformerEncoder with mean pooling, Linear-BN-ReLU-Linear projector, cross-correlation
loss sum_i (1 - C_ii)^2 + lambda * sum_{i != j} C_ij^2 on batch-standardised embeddings, Adam.

Mechanism: the Adam learning rate is 0.1-0.2 (the LARS "base lr" 0.2 of the paper's recipe
copied into Adam, instead of the ~1e-3 Adam needs for a transformer).  Every step moves
each weight by about lr, i.e. far more than the size of the attention/FFN weights
themselves (update/weight ratios ~1 instead of ~1e-3).  The encoder never settles: the
representation is shaken up every step, the cross-correlation matrix stays near (or worse
than) its random-init value and the loss - bounded, because the embeddings are
standardised per dimension - wanders at or above its initial level with no inf/NaN.

ORIGIN: None - the step size is global, every module is over-stepped at once.

Fix: Adam lr 1e-3.  Same model, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Barlow Twins (Zbontar et al. 2021) - LARS base lr 0.2 recipe ported to Adam without "
          "rescaling; 'Barlow Twins loss not decreasing' reports for small transformer encoders")


class TokenEncoder(nn.Module):
    def __init__(self, vocab, d, n_layers, proj):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.02 * torch.randn(1, 16, d))
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.projector = nn.Sequential(nn.Linear(d, proj), nn.BatchNorm1d(proj), nn.ReLU(),
                                       nn.Linear(proj, proj))

    def forward(self, ta, tb):
        def one(t):
            return self.projector(self.encoder(self.emb(t) + self.pos[:, : t.shape[1]]).mean(1))
        return one(ta), one(tb)


def make_loss(lam):
    def barlow(out, target):
        za, zb = out
        n, d = za.shape
        za = (za - za.mean(0)) / (za.std(0) + 1e-5)
        zb = (zb - zb.mean(0)) / (zb.std(0) + 1e-5)
        c = za.T @ zb / n
        on = (1 - torch.diagonal(c)).pow(2).sum()
        off = c.pow(2).sum() - torch.diagonal(c).pow(2).sum()
        return on + lam * off
    return barlow


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 48, 64][seed % 3]
    n_layers = [1, 2, 1][seed % 3]
    proj = [64, 96, 64][seed % 3]
    bs = [64, 96, 80][seed % 3]
    lr = [0.2, 0.1, 0.15][seed % 3]
    if fixed:
        lr = 1e-3
    steps = 120
    vocab, L, n_topics = 64, 16, 8
    topic_words = torch.rand(n_topics, vocab, generator=g) ** 4
    topic_words = topic_words / topic_words.sum(1, keepdim=True)
    batches = []
    for _ in range(steps):
        mix = torch.softmax(3 * torch.randn(bs, n_topics, generator=g), 1)
        probs = mix @ topic_words
        toks = torch.multinomial(probs, L, replacement=True, generator=g)
        def view():
            drop = torch.rand(bs, L, generator=g) < 0.25
            rnd = torch.randint(0, vocab, (bs, L), generator=g)
            return torch.where(drop, rnd, toks)
        batches.append(((view(), view()), torch.zeros(bs)))
    model = TokenEncoder(vocab, d, n_layers, proj)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(5e-3), batches=batches, steps=steps)
