"""Prototypical Network trained episodically where every episode draws its own N-way K-shot
configuration (3- to 10-way, 1- to 5-shot, 2 to 6 queries per class), as in variable-way
curricula and Meta-Dataset-style sampling. The episode loss is the cross-entropy SUMMED over
the episode's queries, so its scale follows the number of queries (6 to 60) and the difficulty
(ln N at chance): the loss curve jumps up and down by an order of magnitude from step to step
and its gradients vary as much. That is an artefact of the reduction, not instability: per-
query accuracy climbs steadily and the summed loss trends down. The model uses a Conv-4-style
encoder with batch-norm, squared Euclidean distances and Adam. Nothing is wrong."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Prototypical Networks (Snell et al. 2017); Meta-Dataset (Triantafillou et al. 2020) "
          "variable-way variable-shot episodes; loss summed over queries")

HW = 12


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))


class ProtoNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(conv_block(1, 16), conv_block(16, 24), conv_block(24, 24))

    def forward(self, support, support_labels, query):
        zs = self.encoder(support).flatten(1)
        zq = self.encoder(query).flatten(1)
        n_way = int(support_labels.max()) + 1
        onehot = F.one_hot(support_labels, n_way).float()                 # (S, N)
        protos = (onehot.t() @ zs) / onehot.sum(0)[:, None]               # class means
        return -torch.cdist(zq, protos) ** 2


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ProtoNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    n_classes = 40
    class_means = torch.rand(n_classes, 1, HW, HW, generator=g)
    steps = 160
    batches = []
    for _ in range(steps):
        way = int(torch.randint(3, 11, (1,), generator=g))
        shot = int(torch.randint(1, 6, (1,), generator=g))
        nq = int(torch.randint(2, 7, (1,), generator=g))
        cls = torch.randperm(n_classes, generator=g)[:way]
        sup = class_means[cls].repeat_interleave(shot, 0) + 0.3 * torch.randn(way * shot, 1, HW, HW, generator=g)
        qry = class_means[cls].repeat_interleave(nq, 0) + 0.3 * torch.randn(way * nq, 1, HW, HW, generator=g)
        sup_lbl = torch.arange(way).repeat_interleave(shot)
        q_lbl = torch.arange(way).repeat_interleave(nq)
        batches.append(((sup, sup_lbl, qry), q_lbl))

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y, reduction="sum")

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
