"""PinSage-style item GNN whose importance pooling uses raw random-walk visit counts.

Mechanism: a PinSage convolution (Ying et al. 2018) aggregates the top-T neighbours of an
item (found by random walks) with importance pooling, agg = sum_j alpha_j * ReLU(Q h_j + q),
then combines z = tanh(W [h_self ; agg] + w) (tanh chosen to keep the item embeddings bounded
for the ANN index) and a linear head predicts whether the item converts next week.  PinSage
defines alpha_j as the L1-normalised visit counts; this implementation passes the raw counts
(hundreds to thousands of visits per neighbourhood).  The messages are non-negative
(post-ReLU), so agg is ~sum(alpha) * mean_message: a vector in the hundreds with the same
direction for every item.  W then produces pre-activations of +-30-300 with a sign fixed per
unit, every tanh unit of the combine layer sits at exactly +-1 in fp32 for every item, its
derivative is exactly 0, and the head only learns the bias: the loss stays at the base-rate
level.

ORIGIN is conv.act: the tanh of the combine step is where the units saturate; the message
MLP and the self features stop receiving gradient because of it.

Fix: L1-normalise the importance weights (alpha_j / sum_j alpha_j), as in the paper; nothing
else changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "conv.act"
SOURCE = ("PinSage (Ying et al., KDD 2018) importance pooling with random-walk visit counts; "
          "implementations that forget the L1 normalisation of the importance weights "
          "(sum instead of weighted mean aggregation).")


class PinSageConv(nn.Module):
    def __init__(self, d_in, d_msg, d_out, normalise):
        super().__init__()
        self.msg = nn.Sequential(nn.Linear(d_in, d_msg), nn.ReLU())
        self.combine = nn.Linear(d_in + d_msg, d_out)
        self.act = nn.Tanh()
        self.normalise = normalise

    def forward(self, h_self, h_nbr, visits):       # (B, d), (B, T, d), (B, T)
        alpha = visits / visits.sum(1, keepdim=True) if self.normalise else visits
        agg = (alpha.unsqueeze(-1) * self.msg(h_nbr)).sum(1)
        return self.act(self.combine(torch.cat([h_self, agg], -1)))


class PinSageRanker(nn.Module):
    def __init__(self, d_in, d_msg, d_out, normalise):
        super().__init__()
        self.conv = PinSageConv(d_in, d_msg, d_out, normalise)
        self.head = nn.Linear(d_out, 1)

    def forward(self, h_self, h_nbr, visits):
        return self.head(self.conv(h_self, h_nbr, visits)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1300 + seed)
    d_in = [16, 24, 12][seed]
    d_msg = [32, 48, 32][seed]
    d_out = [32, 64, 48][seed]
    T = [30, 50, 40][seed]
    lr = [0.05, 0.03, 0.05][seed]
    bs = [256, 192, 256][seed]
    steps = [150, 160, 140][seed]
    n_items = 3000

    feats = torch.randn(n_items, d_in, generator=g)
    nbrs = torch.randint(0, n_items, (n_items, T), generator=g)
    visits = torch.floor(torch.exp(2.5 + 1.0 * torch.randn(n_items, T, generator=g))) + 1.0
    visits, order = visits.sort(dim=1, descending=True)
    nbrs = torch.gather(nbrs, 1, order)
    w_self = torch.randn(d_in, generator=g)
    w_nbr = torch.randn(d_in, generator=g)
    nbr_mean = (visits.unsqueeze(-1) * feats[nbrs]).sum(1) / visits.sum(1, keepdim=True)
    score = feats @ w_self / d_in ** 0.5 + 2.0 * nbr_mean @ w_nbr / d_in ** 0.5
    score = (score - score.median()) / score.std()
    label = (torch.rand(n_items, generator=g) < torch.sigmoid(3.0 * score)).float()

    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_items, (bs,), generator=g)
        batches.append(((feats[idx], feats[nbrs[idx]], visits[idx]), label[idx]))

    model = PinSageRanker(d_in, d_msg, d_out, normalise=fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
