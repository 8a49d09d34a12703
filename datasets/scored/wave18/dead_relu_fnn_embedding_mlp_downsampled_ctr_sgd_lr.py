"""FNN (FM-style field embeddings -> ReLU MLP) CTR model whose narrow ReLU layer dies.

Mechanism: FNN (Zhang et al. 2016) feeds the concatenated field embeddings of a CTR log
(negatives down-sampled to a 50/50 click rate) into a pyramid ReLU MLP whose last hidden
layer is narrow (8-16 units).  The learning rate is the one of the FM pre-training stage
(sparse SGD, lr 2.5-4) reused for the dense MLP with momentum 0.9.  The first steps overshoot:
the output weights swing sign together, the error on a whole batch becomes one-signed, and
every unit of the narrow last hidden layer gets a coherent push of its weights and bias
(its inputs are post-ReLU, all >= 0) to pre-activations below zero for every sample.  Within
a few dozen steps the whole layer (dnn.3) is silent, the logit is the output bias alone and
the loss sits at ln 2 = 0.693 for the rest of the run.

ORIGIN is dnn.3: the narrow last hidden ReLU dies completely; the wide first ReLU (dnn.1)
stays mostly alive, it just stops receiving gradient.

Fix: a learning rate suited to the dense MLP (lr / 10, same SGD + momentum); nothing else
changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "dnn.3"
SOURCE = ("FNN (Zhang, Du & Wang, ECIR 2016, 'Deep learning over multi-field categorical "
          "data'); dying ReLU after too-large SGD steps (Lu et al. 2019; the many 'CTR model "
          "stuck at loss 0.693' reports).")


class FNN(nn.Module):
    def __init__(self, n_fields, vocab, k, hidden):
        super().__init__()
        self.emb = nn.Embedding(n_fields * vocab, k)
        nn.init.normal_(self.emb.weight, std=0.1)
        self.offsets = torch.arange(n_fields) * vocab
        layers, d = [], n_fields * k
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.dnn = nn.Sequential(*layers)

    def forward(self, ids):
        e = self.emb(ids + self.offsets).flatten(1)
        return self.dnn(e).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(40 + seed)
    n_fields = [10, 12, 8][seed]
    vocab = 20
    k = [8, 8, 12][seed]
    hidden = [[64, 16], [128, 16], [96, 8]][seed]
    bs = [256, 128, 192][seed]
    steps = [150, 180, 160][seed]
    lr = [4.0, 3.0, 2.5][seed]
    if fixed:
        lr = lr / 10
    n = bs * steps
    ids = torch.randint(0, vocab, (n, n_fields), generator=g)
    V = torch.randn(n_fields, vocab, 4, generator=g)
    W = torch.randn(n_fields, vocab, generator=g)
    v = V[torch.arange(n_fields), ids]                     # (n, F, 4)
    s = v.sum(1).pow(2).sum(1) - v.pow(2).sum((1, 2))
    s = 0.15 * s / n_fields + W[torch.arange(n_fields), ids].sum(1) / n_fields ** 0.5
    s = (s - s.median()) / s.std()
    y = (torch.rand(n, generator=g) < torch.sigmoid(3 * s)).float()
    batches = [(ids[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    model = FNN(n_fields, vocab, k, hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
