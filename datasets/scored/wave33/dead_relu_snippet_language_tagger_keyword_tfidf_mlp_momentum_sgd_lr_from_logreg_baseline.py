"""Programming-language identification for short code snippets (Stack Overflow / paste-site
snippets, including low-resource languages such as Nim, Zig or Racket): hashed keyword and
punctuation-bigram counts, log(1 + tf) weighted (all features >= 0), fed to a two-hidden-layer
ReLU MLP.  Cross-entropy, SGD with momentum 0.9.

Mechanism: the MLP replaced a multinomial logistic-regression baseline that was trained at
lr 1.0; the learning rate (and momentum) were kept.  Because every input feature is
non-negative, a hidden unit whose bias and incoming weights are pushed negative by one large
update is negative for *every* snippet.  The first few momentum-SGD steps at lr 0.5-1.0 move
the first-layer biases and weights by O(1) along the (mostly same-signed) gradient, and within a
handful of steps most hidden units in both layers output exactly 0 with exactly zero gradient;
the classifier is left with the output bias and the loss sits at the log of the number of
languages (a stall, no inf/NaN) while the same MLP at a sane lr learns.

ORIGIN: ``net.0`` -- the first Linear, whose units die first (their inputs are non-negative,
so a negative weight row plus negative bias kills them for all data); the second hidden layer
dies as a consequence because its inputs become all-zero.

Fix (fixed=True): lr 0.05 with the same momentum, model, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.0"
SOURCE = ("Dying-ReLU after large early SGD steps (CS231n 'a large gradient flowing through a ReLU "
          "neuron could cause the weights to update in such a way that the neuron will never "
          "activate again'; Lu et al. 2019); code-snippet language ID as in GitHub Linguist / "
          "'Predicting the programming language of questions and snippets of Stack Overflow' (Alrashedy 2018).")

N_FEATS = 512


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 192, 96][seed % 3]
    lr = 0.05 if fixed else [1.0, 0.6, 0.8][seed % 3]
    bs = [64, 32, 48][seed % 3]
    n_langs = [12, 16, 10][seed % 3]
    steps = 150

    torch.manual_seed(seed)
    model = nn.Sequential()
    model.net = nn.Sequential(nn.Linear(N_FEATS, width), nn.ReLU(),
                              nn.Linear(width, width), nn.ReLU(),
                              nn.Linear(width, n_langs))

    # each language has a set of indicative keyword buckets ("fn", "proc", "defun", ":=" ...)
    profile = torch.rand(n_langs, N_FEATS, generator=g).pow(6) * 4.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_langs, (bs,), generator=g)
        rate = profile[y] + 0.05
        counts = torch.poisson(rate, generator=g)
        x = torch.log1p(counts)
        batches.append((x, y))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps)
