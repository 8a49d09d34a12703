"""Spam filtering - an NBSVM-style logistic model: an EmbeddingBag of
per-token weights initialised with Naive-Bayes log-count ratios (computed on
last year's labelled mail), summed over the e-mail, plus a small learned
bag-of-embeddings MLP branch; ``torch.sigmoid`` output trained with
``nn.BCELoss``.

Mechanism: NB log-count ratios are per-token log-odds (|r| ~ 0.5-3), and
the bag sums them over the whole message (150-300 tokens).  The logits are
therefore in the tens to hundreds from the first step: ``sigmoid`` returns
exactly 0.0 or 1.0 in float32 for almost every message.  For correctly
classified mail that gives loss 0 and zero gradient; for the messages the
old NB counts get wrong - this year's legitimate transactional mail
(invoices, account alerts, opted-in promotions) is worded like spam, so its
logit is +tens - ``log(1 - sigmoid(z))`` is log(0), which ``BCELoss`` clamps
at -100: a constant loss of 100 with a gradient of exactly 0 through the
saturated sigmoid.  The loss is dominated by these clamped messages and
cannot move: it stays at its starting level (a stall, no non-finite value)
while the length-normalised model learns to let that mail through.

ORIGIN: ``out_act`` - the output sigmoid, whose saturation zeroes the
gradient (its pre-activation is the oversized summed log-odds).

Fix: mean instead of sum pooling for the NB bag (``mode="mean"``: the
average log-count ratio per token), which keeps the sigmoid's input O(1);
same init, model, loss, data and optimiser.
"""
import random

import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("NBSVM / NB-initialised logistic regression (Wang & Manning, ACL 2012) for spam filtering; "
          "sigmoid + nn.BCELoss saturation with logits summed over long documents (PyTorch docs: "
          "BCELoss clamps log outputs to >= -100; forum threads 'BCELoss stuck at 100 / gradient zero')")

V = 1500
EMB = 16


class SpamNB(nn.Module):
    def __init__(self, nb_ratio, nb_bias, hidden, mode):
        super().__init__()
        self.nb_bag = nn.EmbeddingBag(V, 1, mode=mode)
        with torch.no_grad():
            self.nb_bag.weight.copy_(nb_ratio[:, None])
        self.nb_bias = nn.Parameter(torch.tensor(float(nb_bias)))
        self.bag = nn.EmbeddingBag(V, EMB, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(EMB, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.out_act = nn.Sigmoid()

    def forward(self, toks):
        z = self.nb_bag(toks).squeeze(1) + self.nb_bias + self.mlp(self.bag(toks)).squeeze(1)
        return self.out_act(z)


def _mail(g, n, length, p_ham, p_spam, p_new, new_frac):
    y = (torch.rand(n, generator=g) < 0.5).float()
    rows = []
    for i in range(n):
        if y[i] == 1:
            p = p_spam
        else:
            p = p_new if torch.rand(1, generator=g).item() < new_frac else p_ham
        rows.append(torch.multinomial(p, length, replacement=True, generator=g))
    return torch.stack(rows), y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    length = r.choice([150, 200, 300])
    hidden = r.choice([16, 32])
    lr = r.choice([1e-2, 2e-2])
    bs = r.choice([32, 48, 64])
    steps = r.choice([80, 100, 120])
    new_frac = r.choice([0.3, 0.4])

    g = torch.Generator().manual_seed(13000 + seed)
    zipf = 1.0 / torch.arange(1, V + 1).float() ** 1.05
    def dist(noise):
        return torch.softmax(torch.log(zipf) + noise * torch.randn(V, generator=g), 0)
    p_ham, p_spam = dist(0.8), dist(0.8)
    # this year's legitimate transactional mail (billing, account alerts, promotions the users
    # opted into) is worded like spam: mostly spam vocabulary plus a few new ham tokens
    p_new = 0.8 * p_spam + 0.2 * dist(1.5)

    # NB log-count ratios from last year's corpus (before those mails existed), Laplace smoothing
    old_ham = torch.multinomial(p_ham, 200000, replacement=True, generator=g).bincount(minlength=V)
    old_spam = torch.multinomial(p_spam, 200000, replacement=True, generator=g).bincount(minlength=V)
    ph = (old_ham + 1.0) / (old_ham + 1.0).sum()
    ps = (old_spam + 1.0) / (old_spam + 1.0).sum()
    nb_ratio = torch.log(ps / ph)

    batches = [_mail(g, bs, length, p_ham, p_spam, p_new, new_frac) for _ in range(steps)]

    torch.manual_seed(seed)
    model = SpamNB(nb_ratio, 0.0, hidden, "mean" if fixed else "sum")
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
