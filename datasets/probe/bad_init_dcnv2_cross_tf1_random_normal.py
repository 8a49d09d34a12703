"""DCN-v2 (Wang et al. 2021) CTR model whose cross layers were initialised with a port of
TF1's `tf.random_normal_initializer()`, whose default stddev is 1.0 (not 0.05 / glorot).
Each cross layer computes x_{l+1} = x0 * (W_l x_l + b_l) + x_l, so with W ~ N(0, 1) the
activation scale is multiplied by ~sqrt(d) per layer: logits are ~1e4 from step 0, BCE is
huge, the SGD+momentum step on those gradients blows the weights up and the loss is NaN by step 2.
fixed=True: the cross and head kernels use glorot (xavier_uniform) init as in TF-Recommenders' DCN.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "cross.0"
SOURCE = ("DCN-v2 (arXiv 2008.13535) / tensorflow_recommenders Cross layer; TF1 "
          "tf.random_normal_initializer() defaults to stddev=1.0, a common porting bug "
          "(kernel init std 1 makes the polynomial cross network blow up with depth)")

N_DENSE, N_FIELDS, VOCAB, EMB = 8, 6, 50, 8
D = N_DENSE + N_FIELDS * EMB


class CrossLayerV2(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense = nn.Linear(d, d)

    def forward(self, x0, xl):
        return x0 * self.dense(xl) + xl


class DCNv2(nn.Module):
    def __init__(self, n_cross=4):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(VOCAB, EMB) for _ in range(N_FIELDS)])
        self.cross = nn.ModuleList([CrossLayerV2(D) for _ in range(n_cross)])
        self.deep = nn.Sequential(nn.Linear(D, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(D + 32, 1)

    def forward(self, dense, cat):
        e = [emb(cat[:, i]) for i, emb in enumerate(self.emb)]
        x0 = torch.cat([dense] + e, dim=1)
        xl = x0
        for layer in self.cross:
            xl = layer(x0, xl)
        h = self.deep(x0)
        return self.head(torch.cat([xl, h], dim=1)).squeeze(-1)


def _make_data(g, n_batches, bs):
    w_dense = torch.randn(N_DENSE, generator=g) * 0.6
    field_eff = torch.randn(N_FIELDS, VOCAB, generator=g) * 0.5
    pair = torch.randn(N_DENSE, N_DENSE, generator=g) * 0.2
    batches = []
    for _ in range(n_batches):
        dense = torch.randn(bs, N_DENSE, generator=g)
        cat = torch.randint(0, VOCAB, (bs, N_FIELDS), generator=g)
        logit = dense @ w_dense + ((dense @ pair) * dense).sum(1) * 0.5
        logit = logit + field_eff[torch.arange(N_FIELDS), cat].sum(1) - 0.5
        y = torch.bernoulli(torch.sigmoid(logit), generator=g)
        batches.append(((dense, cat), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DCNv2()
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear) and (name.startswith("cross") or name == "head"):
            if fixed:
                nn.init.xavier_uniform_(m.weight)      # glorot_uniform, as in TFRS Cross
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)    # tf.random_normal_initializer() default
            nn.init.zeros_(m.bias)
    steps = 200
    batches = _make_data(g, steps, 256)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, y: F.binary_cross_entropy_with_logits(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
