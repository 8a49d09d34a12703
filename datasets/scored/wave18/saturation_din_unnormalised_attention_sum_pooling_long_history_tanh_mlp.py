"""DIN with un-normalised attention sum pooling over long histories into a tanh MLP.

Mechanism: Deep Interest Network (Zhou et al. 2018) pools the behaviour sequence with an
activation unit, w_t = sigmoid(a(e_t, e_target)) with no softmax over the sequence (the
paper drops the normalisation "to keep the intensity of user interests";
att_weight_normalization=False in DeepCTR), pooled = sum_t w_t * e_t.  The attention unit
starts neutral (w_t = 0.5).  The item embeddings are initialised from an item2vec model and,
like word2vec vectors, share a large common mean direction.  Histories are 120-200 items
long, so pooled ~ 0.5 * L * mean_vector: a vector of norm in the hundreds that is nearly the
same for every user.  The first MLP layer (tanh, as in an older config) turns it into
pre-activations of +-20-100 whose sign is the same for every sample: >90% of the tanh
units of mlp.1 are at exactly +-1 in fp32, their derivative is exactly 0, and the few
units left cannot carry the target item / segment signal.  Trained with SGD + momentum (as
in the DIN paper) the loss stays at the base-rate level for the whole run.

ORIGIN is mlp.1: the first tanh layer after the concatenation is where the units
saturate; the attention unit and the embeddings stop receiving gradient because of it.

Fix: normalise the attention weights over the sequence (softmax, DeepCTR's
att_weight_normalization=True), which keeps the pooled vector at the embedding scale;
nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "mlp.1"
SOURCE = ("Deep Interest Network (Zhou et al., KDD 2018) and DeepCTR's DIN "
          "(att_weight_normalization=False by default); un-normalised sum pooling of long "
          "behaviour sequences saturating a tanh DNN.")


class ActivationUnit(nn.Module):
    def __init__(self, k, h):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4 * k, h), nn.PReLU(), nn.Linear(h, 1))
        nn.init.zeros_(self.net[-1].weight)          # attention starts uniform
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, hist, target):                 # hist (B, L, k), target (B, k)
        t = target.unsqueeze(1).expand_as(hist)
        return self.net(torch.cat([hist, t, hist - t, hist * t], -1)).squeeze(-1)


class DIN(nn.Module):
    def __init__(self, item_vecs, n_seg, k, h_att, hidden, normalise):
        super().__init__()
        self.items = nn.Embedding.from_pretrained(item_vecs, freeze=False)
        self.seg = nn.Embedding(n_seg, k)
        self.att = ActivationUnit(k, h_att)
        self.normalise = normalise
        layers, d = [], 3 * k
        for hdim in hidden:
            layers += [nn.Linear(d, hdim), nn.Tanh()]
            d = hdim
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, hist_ids, target_id, seg):
        hist, tgt = self.items(hist_ids), self.items(target_id)
        scores = self.att(hist, tgt)
        w = F.softmax(scores, dim=1) if self.normalise else torch.sigmoid(scores)
        pooled = (w.unsqueeze(-1) * hist).sum(1)
        return self.mlp(torch.cat([pooled, tgt, self.seg(seg)], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1200 + seed)
    k = [16, 24, 20][seed]
    L = [150, 200, 120][seed]
    hidden = [[64, 32], [80, 40], [48, 24]][seed]
    lr = [0.02, 0.03, 0.03][seed]
    bs = [96, 64, 128][seed]
    steps = [140, 150, 170][seed]
    n_items, n_topics, n_seg = 500, 8, 10

    topic = torch.randint(0, n_topics, (n_items,), generator=g)
    topic_vec = torch.randn(n_topics, k, generator=g)
    common = torch.randn(k, generator=g)
    common = 3.0 * common / common.norm() * k ** 0.5                 # shared item2vec direction
    item_vecs = common + topic_vec[topic] + 0.5 * torch.randn(n_items, k, generator=g)

    topic_eff = torch.randn(n_topics, generator=g)
    seg_eff = torch.randn(n_seg, generator=g)
    batches = []
    for _ in range(steps):
        fav = torch.randint(0, n_topics, (bs,), generator=g)         # user's main interest
        pick_fav = torch.rand(bs, L, generator=g) < 0.6
        fav_items = torch.stack([torch.nonzero(topic == f).squeeze(1)[
            torch.randint(0, int((topic == f).sum()), (L,), generator=g)] for f in fav.tolist()])
        rand_items = torch.randint(0, n_items, (bs, L), generator=g)
        hist = torch.where(pick_fav, fav_items, rand_items)
        target = torch.randint(0, n_items, (bs,), generator=g)
        seg = torch.randint(0, n_seg, (bs,), generator=g)
        logit = (2.0 * topic_eff[topic[target]] + 1.5 * seg_eff[seg]
                 + 2.0 * (topic[target] == fav).float() - 0.5)
        y = (torch.rand(bs, generator=g) < torch.sigmoid(logit)).float()
        batches.append(((hist, target, seg), y))

    model = DIN(item_vecs, n_seg, k, 36, hidden, normalise=fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
