"""Relation Network few-shot classifier whose sigmoid relation score saturates because the
K-shot support embeddings are summed.

Mechanism: Sung et al.'s Relation Network: an embedding module f, a class representation
built from the K support embeddings, a relation module g(concat(class_repr, f(query)))
ending in a sigmoid, and an MSE loss against the one-hot match matrix, trained with SGD +
momentum.  The paper sums the K support embeddings element-wise; with pre-extracted
non-negative (post-ReLU) CNN features and K = 15-25 shots the summed class vector is
15-25x larger than a query embedding.  The first-layer weights of the relation module that
see it get 15-25x larger gradients, the first few updates overshoot and drive the
pre-sigmoid relation scores to |z| ~ 100: the sigmoid is saturated at 0 for every pair,
sigma'(z) ~ e^-100, no gradient flows back through the output unit and the MSE sits at
1/N (all scores 0) for the rest of the run.

ORIGIN is ``relation.out_act``: the sigmoid that saturates; everything upstream is
starved of gradient by it.

Fix: average the support embeddings (class prototype) so the relation inputs keep the
scale of a single embedding.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "relation.out_act"
SOURCE = ("Sung et al. 2018 'Learning to Compare: Relation Network for Few-Shot Learning' "
          "(K-shot class features summed, sigmoid + MSE); reports of RN loss stuck in the "
          "many-shot setting")


class Embedding(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class RelationModule(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(2 * hidden, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, 1)
        self.out_act = nn.Sigmoid()

    def forward(self, pair):
        return self.out_act(self.fc2(self.act(self.fc1(pair))))


class RelationNetwork(nn.Module):
    def __init__(self, d_in, hidden, average_shots):
        super().__init__()
        self.embed = Embedding(d_in, hidden)
        self.relation = RelationModule(hidden)
        self.average_shots = average_shots

    def forward(self, support, query):  # support (N, K, D), query (Q, D)
        s = self.embed(support)
        cls = s.mean(1) if self.average_shots else s.sum(1)       # (N, H)
        q = self.embed(query)                                      # (Q, H)
        n, qn = cls.shape[0], q.shape[0]
        pairs = torch.cat([cls.unsqueeze(0).expand(qn, n, -1),
                           q.unsqueeze(1).expand(qn, n, -1)], dim=-1)
        return self.relation(pairs).squeeze(-1)                    # (Q, N) scores


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(way=5, shot=20, q=6, d=16, pool=10, hidden=64, lr=0.3, steps=300),
           dict(way=5, shot=15, q=8, d=32, pool=20, hidden=64, lr=0.3, steps=280),
           dict(way=6, shot=25, q=5, d=24, pool=12, hidden=48, lr=0.3, steps=320)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(321 + seed)
    d_in, n_pool = cfg["d"], cfg["pool"]
    centers = torch.randn(n_pool, d_in, generator=g)

    def features(c, n):  # pre-extracted post-ReLU CNN features
        return F.relu(centers[c] + 0.5 * torch.randn(n, d_in, generator=g))

    batches = []
    for _ in range(cfg["steps"]):
        classes = torch.randperm(n_pool, generator=g)[:cfg["way"]]
        support = torch.stack([features(c, cfg["shot"]) for c in classes])
        query = torch.cat([features(c, cfg["q"]) for c in classes])
        labels = torch.arange(cfg["way"]).repeat_interleave(cfg["q"])
        target = F.one_hot(labels, cfg["way"]).float()
        batches.append(((support, query), target))
    model = RelationNetwork(d_in, cfg["hidden"], average_shots=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
