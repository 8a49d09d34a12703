"""DeepFM whose DNN layers were initialised with nn.init.normal_ at its default std=1.

Mechanism: DeepFM (Guo et al. 2017) shares field embeddings between an FM component and a
400-400-400-style ReLU DNN.  Porting a TF1 implementation, the user replaced the
glorot-normal initialiser with `nn.init.normal_(m.weight)`, whose default std is 1.0, not
the ~sqrt(2/(fan_in+fan_out)) the original code used.  Each Linear then multiplies the
activation scale by ~sqrt(fan_in / 2) (10-14x for widths 200-400), so from step 0 the DNN
logit is 1e2-1e3 times too large even though the embeddings are small (std 0.01), the BCE
loss starts at 4-300 instead of 0.69, and the SGD+momentum steps on these enormous
activations blow the weights up further: with three or four hidden layers the loss is
inf / NaN within a few steps; with two it bounces between 4 and 30 and never gets near the
fixed run.

ORIGIN is dnn.0: the first badly initialised Linear, where the geometric growth of the
activation scale starts (every later Linear multiplies it again).

Fix: Xavier/Glorot-normal weights and zero biases for the DNN (what the reference code
does); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "dnn.0"
SOURCE = ("DeepFM (Guo et al., IJCAI 2017); TF1 -> PyTorch ports that call nn.init.normal_ "
          "without std (default 1.0) instead of glorot normal, giving NaN loss from the "
          "first iterations.")


class DeepFM(nn.Module):
    def __init__(self, n_fields, vocab, k, hidden, std1):
        super().__init__()
        self.register_buffer("offsets", torch.arange(n_fields) * vocab)
        self.emb = nn.Embedding(n_fields * vocab, k)
        nn.init.normal_(self.emb.weight, std=0.01)
        self.lin = nn.Embedding(n_fields * vocab, 1)
        nn.init.zeros_(self.lin.weight)
        self.bias = nn.Parameter(torch.zeros(1))
        layers, d = [], n_fields * k
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.dnn = nn.Sequential(*layers)
        for m in self.dnn:
            if isinstance(m, nn.Linear):
                if std1:
                    nn.init.normal_(m.weight)            # std defaults to 1.0
                else:
                    nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, ids):
        ids = ids + self.offsets
        e = self.emb(ids)                                        # (B, F, k)
        fm = 0.5 * (e.sum(1).pow(2) - e.pow(2).sum(1)).sum(1)
        first = self.lin(ids).sum((1, 2))
        return self.bias + first + fm + self.dnn(e.flatten(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(610 + seed)
    n_fields = [10, 12, 8][seed]
    vocab = 25
    k = [8, 10, 8][seed]
    hidden = [[400, 400, 400], [256, 256], [200, 200, 200, 200]][seed]
    lr = [0.03, 0.05, 0.02][seed]
    bs = [256, 200, 320][seed]
    steps = 120

    n = bs * steps
    ids = torch.randint(0, vocab, (n, n_fields), generator=g)
    W = torch.randn(n_fields, vocab, generator=g)
    V = torch.randn(n_fields, vocab, 3, generator=g)
    v = V[torch.arange(n_fields), ids]
    s = W[torch.arange(n_fields), ids].sum(1) / n_fields ** 0.5
    s = s + 0.2 * (v.sum(1).pow(2).sum(1) - v.pow(2).sum((1, 2))) / n_fields
    s = s - s.quantile(0.7)                                      # ~30% click rate
    y = (torch.rand(n, generator=g) < torch.sigmoid(5.0 * s)).float()
    batches = [(ids[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    model = DeepFM(n_fields, vocab, k, hidden, std1=not fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
