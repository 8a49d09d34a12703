"""Emergency-call (911 / 112) triage: bag-of-words MLP over dispatcher call notes.

Domain: a dispatch centre classifies free-text call-taker notes ("unresponsive male, not
breathing", "minor fender bender no injuries", ...) into a triage priority (echo / delta /
charlie / alpha / omega style determinant levels). The practitioner vectorises the notes with a
TF-IDF vectoriser (all features >= 0), feeds a two-hidden-layer ReLU MLP and trains with
momentum SGD, copying lr~1.5 from a linear-model (logistic regression on TF-IDF) recipe where
that rate is fine.

Mechanism: with non-negative inputs, the gradient of every incoming weight of a hidden unit has
the same sign (the sign of that unit's back-propagated error), so one large SGD step moves all of
a unit's weights down together. With lr~1.5 and momentum 0.9 the first few overshooting steps push
the pre-activations of the first hidden layer below zero for every possible TF-IDF vector; those
units output 0, receive no gradient and never come back. Once (nearly) the whole first layer is
dead, the network outputs a constant and the loss plateaus at the class-prior entropy.

ORIGIN: "mlp.1" -- the ReLU after the first Linear (mlp.0) is where the units die; everything
downstream only sees the zeros it emits.

Fix: lower the learning rate to what a deep ReLU net on TF-IDF needs (0.05 with the same
momentum); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("Known pattern: dying ReLU after large SGD steps with non-negative (bag-of-words / TF-IDF) "
          "inputs; cf. CS231n notes on 'dead' ReLUs with too-high learning rates, and NLP triage "
          "of EMS call notes with TF-IDF + MLP baselines")


class TriageMLP(nn.Module):
    def __init__(self, vocab, hidden, n_classes):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(vocab, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden // 2), nn.ReLU(),
            nn.Linear(hidden // 2, n_classes),
        )

    def forward(self, x):
        return self.mlp(x)


def _make_notes(g, n, vocab, n_classes, topic):
    # each priority level has a preferred set of keywords; notes are sparse TF-IDF vectors
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = torch.zeros(n, vocab)
    n_words = 12
    for i in range(n):
        probs = topic[y[i]]
        idx = torch.multinomial(probs, n_words, replacement=True, generator=g)
        x[i].index_add_(0, idx, torch.ones(n_words))
    idf = torch.log(1.0 + vocab / (1.0 + (x > 0).float().sum(0)))
    x = x * idf
    x = x / x.norm(dim=1, keepdim=True).clamp_min(1e-6) * 4.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab = [300, 400, 500][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    n_classes = 5
    batch = [64, 48, 80][seed % 3]
    steps = 150
    lr = 0.05 if fixed else [1.5, 1.7, 1.6][seed % 3]

    base = torch.rand(vocab, generator=g) * 0.2
    topic = []
    for c in range(n_classes):
        p = base.clone()
        kw = torch.randperm(vocab, generator=g)[:25]
        p[kw] += 3.0
        topic.append(p / p.sum())
    topic = torch.stack(topic)

    batches = []
    for _ in range(steps):
        batches.append(_make_notes(g, batch, vocab, n_classes, topic))

    model = TriageMLP(vocab, hidden, n_classes)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
