"""Inner-product PNN whose deep tower was initialised with normal(0, 0.01) weights.

Mechanism: IPNN (Qu et al. 2016) feeds a linear signal of the concatenated field
embeddings plus all pairwise inner products into a stack of ReLU layers.  The tower weights
are initialised the "TF1 recipe" way, N(0, 0.01), with zero biases, for 4-5 Linear layers of
width 96-160.  Each Linear then multiplies the activation scale by
sqrt(fan_in * 0.01**2 / 2) ~ 0.07-0.09, so after the tower the signal is ~1e-5-1e-6 of its
input: the logit is the output bias only.  Back-propagated gradients shrink by the same
factor per layer, so SGD (momentum 0.9) moves nothing but the output bias, which only learns the
50/50 base rate: the loss stays at ln 2 for the whole run.

ORIGIN is product_layer.lz: the first Linear of the tower (the linear signal l_z of the
product layer), where the geometric shrinking of the activation scale begins.

Fix: Kaiming (He) normal initialisation of the tower weights; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "product_layer.lz"
SOURCE = ("PNN / IPNN (Qu et al., ICDM 2016, 'Product-based neural networks for user "
          "response prediction'); TF1-era truncated_normal(stddev=0.01) initialisers in deep "
          "ReLU towers trained with plain SGD (vanishing signal, loss stuck at 0.693).")


class ProductLayer(nn.Module):
    def __init__(self, n_fields, k, d1):
        super().__init__()
        n_pairs = n_fields * (n_fields - 1) // 2
        self.lz = nn.Linear(n_fields * k, d1)
        self.lp = nn.Linear(n_pairs, d1, bias=False)
        i, j = torch.triu_indices(n_fields, n_fields, offset=1)
        self.register_buffer("pi", i)
        self.register_buffer("pj", j)

    def forward(self, e):                                   # e: (B, F, k)
        p = (e[:, self.pi] * e[:, self.pj]).sum(-1)          # pair-wise inner products
        return self.lz(e.flatten(1)) + self.lp(p)


class IPNN(nn.Module):
    def __init__(self, n_fields, vocab, k, hidden):
        super().__init__()
        self.register_buffer("offsets", torch.arange(n_fields) * vocab)
        self.emb = nn.Embedding(n_fields * vocab, k)
        nn.init.normal_(self.emb.weight, std=0.3)
        self.product_layer = ProductLayer(n_fields, k, hidden[0])
        self.act = nn.ReLU()
        layers, d = [], hidden[0]
        for h in hidden[1:]:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.tower = nn.Sequential(*layers)

    def forward(self, ids):
        e = self.emb(ids + self.offsets)
        return self.tower(self.act(self.product_layer(e))).squeeze(-1)


def _init_tower(model, tiny):
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if tiny:
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
            else:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(720 + seed)
    n_fields = [10, 8, 12][seed]
    vocab = 20
    k = [8, 10, 6][seed]
    hidden = [[128, 128, 128, 128], [160, 160, 160], [96, 96, 96, 96, 96]][seed]
    lr = [0.05, 0.08, 0.06][seed]
    bs = [256, 192, 256][seed]
    steps = [150, 160, 180][seed]

    n = bs * steps
    ids = torch.randint(0, vocab, (n, n_fields), generator=g)
    W = torch.randn(n_fields, vocab, generator=g)
    V = torch.randn(n_fields, vocab, 3, generator=g)
    v = V[torch.arange(n_fields), ids]
    s = W[torch.arange(n_fields), ids].sum(1) / n_fields ** 0.5
    s = s + 0.2 * (v.sum(1).pow(2).sum(1) - v.pow(2).sum((1, 2))) / n_fields
    s = s - s.median()                                      # 50/50 (down-sampled) clicks
    y = (torch.rand(n, generator=g) < torch.sigmoid(4.0 * s)).float()
    batches = [(ids[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    model = IPNN(n_fields, vocab, k, hidden)
    _init_tower(model, tiny=not fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
