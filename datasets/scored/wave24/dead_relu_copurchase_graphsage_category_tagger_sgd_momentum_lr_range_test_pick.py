"""Product-category tagger on the co-purchase graph: a hand-written two-layer GraphSAGE
(mean aggregator; self and neighbour Linears, ReLU) over daily co-purchase subgraphs of the
catalogue, predicting each product's leaf category from its multi-hot attribute flags
(brand family, material, colour, size system ...); SGD with momentum 0.9.

Mechanism: the learning rate (2-3) was taken from a short LR-range test, at the point where
the loss of the first few steps fell fastest. The first steps do lower the loss, but the
momentum-amplified updates of ~lr x grad are several times the whole initial weight scale,
and because the attribute inputs (and their neighbour means) are all non-negative, every
incoming weight of a unit moves in the same direction. Units whose early gradients say
"less" get bias and weights so negative that their pre-activation is < 0 for every product;
they output 0 and receive no gradient again. Within ~20 steps almost all units of both SAGE
layers are dead, the logits collapse to the output bias, and the loss climbs back to and
stays at the class-prior entropy (log 8), above where it started.

ORIGIN: "act1", the ReLU after the first SAGE layer, where units die first (layer 2 then only
sees zeros and its ReLU dies with it).

Fix: lr = 0.1 (same SGD momentum, model, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "act1"
SOURCE = ("Dying ReLU after over-large early updates (CS231n notes; Lu et al. 2019); LR-range-"
          "test picks at the steepest early descent (Smith 2017; fastai lr_find caveats); "
          "GraphSAGE on product co-purchase graphs (Hamilton et al. 2017; ogbn-products)")


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.neigh_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, h, a_mean):
        return self.self_lin(h) + self.neigh_lin(a_mean @ h)


class CoPurchaseSAGE(nn.Module):
    def __init__(self, d, hid, n_cls):
        super().__init__()
        self.sage1 = SAGELayer(d, hid)
        self.act1 = nn.ReLU()
        self.sage2 = SAGELayer(hid, hid)
        self.act2 = nn.ReLU()
        self.out = nn.Linear(hid, n_cls)

    def forward(self, x, a_mean):
        h = self.act1(self.sage1(x, a_mean))
        h = self.act2(self.sage2(h, a_mean))
        return self.out(h)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d, n_cls, steps = 32, 8, 120
    hid = [64, 96, 128][seed % 3]
    n = [160, 200, 240][seed % 3]           # products in a day's co-purchase subgraph
    lr = 0.1 if fixed else [2.0, 2.5, 3.0][seed % 3]
    torch.manual_seed(seed)
    model = CoPurchaseSAGE(d, hid, n_cls)
    # multi-hot attribute flags (brand family, material, colour, size system, ...)
    attr_p = 0.05 + 0.4 * (torch.rand(n_cls, d, generator=g) < 0.25).float()
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (n,), generator=g)
        x = (torch.rand(n, d, generator=g) < attr_p[y]).float()
        same = (y[:, None] == y[None, :]).float()
        p = 0.04 * same + 0.004
        a = (torch.rand(n, n, generator=g) < p).float()
        a = torch.triu(a, 1)
        a = a + a.T
        a_mean = a / a.sum(1, keepdim=True).clamp_min(1.0)
        batches.append(((x, a_mean), y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
