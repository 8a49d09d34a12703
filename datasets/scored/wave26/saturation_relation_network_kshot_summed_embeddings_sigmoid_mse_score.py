"""Relation Network (Sung et al., CVPR 2018) few-shot learner with a BN-free relation module.

Mechanism: the original recipe builds each class representation by *summing* the K support
embeddings ("element-wise sum over the embedding module outputs of all samples from each training
class") and scores a (class, query) pair with a sigmoid trained by MSE against 0/1.  This port
drops the BatchNorm layers of the relation module (it was moved to a small, mixed-shot tabular
sensor dataset), so nothing rescales the summed features any more.  With K = 10-20 shots the
class channel of the relation input is K times larger than the query channel, the relation
logits land at |z| >> 5, sigmoid'(z) ~ 0 and the MSE gradient (p - y) * sigmoid'(z) vanishes.
SGD with momentum never gets out (its first steps even push the logits from ~+10 to ~-100): the
loss sits at the fraction of wrongly saturated pairs.

ORIGIN: "relation.out" -- the final Linear whose output goes through the sigmoid; the saturated
sigmoid on its output is where the gradient is cut, everything upstream only sees the vanished
gradient through it.

Fix: average the K support embeddings (prototype mean) instead of summing them, which keeps the
relation logits small; everything else is identical.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "relation.out"
SOURCE = ("Sung et al. 2018 'Learning to Compare: Relation Network for Few-Shot Learning' (sums "
          "K-shot embeddings, sigmoid + MSE relation score); floodsung/LearningToCompare_FSL issues on "
          "relation scores stuck at 0/1 when ported without BatchNorm")


class Embed(nn.Module):
    def __init__(self, d_in, h):
        super().__init__()
        self.fc1 = nn.Linear(d_in, h)
        self.fc2 = nn.Linear(h, h)
        self.act = nn.ReLU()
        for m in (self.fc1, self.fc2):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.act(self.fc2(self.act(self.fc1(x))))


class Relation(nn.Module):
    def __init__(self, h, r):
        super().__init__()
        self.hid = nn.Linear(2 * h, r)
        self.act = nn.ReLU()
        self.out = nn.Linear(r, 1)
        nn.init.kaiming_normal_(self.hid.weight, nonlinearity="relu")
        nn.init.zeros_(self.hid.bias)
        nn.init.kaiming_normal_(self.out.weight, nonlinearity="relu")
        nn.init.zeros_(self.out.bias)

    def forward(self, pair):
        return torch.sigmoid(self.out(self.act(self.hid(pair)))).squeeze(-1)


class RelationNet(nn.Module):
    def __init__(self, d_in, h, r, n_way, k_shot, fixed):
        super().__init__()
        self.embed = Embed(d_in, h)
        self.relation = Relation(h, r)
        self.n_way, self.k_shot, self.fixed = n_way, k_shot, fixed

    def forward(self, support, query):
        # support: (N*K, d) ordered class-major; query: (Q, d)
        fs = self.embed(support).view(self.n_way, self.k_shot, -1)
        cls = fs.mean(1) if self.fixed else fs.sum(1)          # <- the bug: sum over shots
        fq = self.embed(query)
        nq = fq.shape[0]
        pair = torch.cat([cls.unsqueeze(0).expand(nq, -1, -1),
                          fq.unsqueeze(1).expand(-1, self.n_way, -1)], dim=-1)
        return self.relation(pair)                              # (Q, N) relation scores


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_way = 5
    k_shot = [12, 16, 20][seed % 3]
    d_in = 24
    h = [64, 96, 48][seed % 3]
    r = [16, 32, 24][seed % 3]
    q_per = 4
    lr = [0.05, 0.04, 0.06][seed % 3]
    steps = 150
    n_classes = 40
    protos = torch.randn(n_classes, d_in, generator=g) * 1.0 + 1.0   # positive-mean sensor features
    batches = []
    for _ in range(steps):
        cls = torch.randperm(n_classes, generator=g)[:n_way]
        sup = protos[cls].repeat_interleave(k_shot, 0) + 0.6 * torch.randn(n_way * k_shot, d_in, generator=g)
        lab = torch.arange(n_way).repeat_interleave(q_per)
        qry = protos[cls][lab] + 0.6 * torch.randn(n_way * q_per, d_in, generator=g)
        tgt = torch.nn.functional.one_hot(lab, n_way).float()
        batches.append(((sup, qry), tgt))
    torch.manual_seed(seed)
    model = RelationNet(d_in, h, r, n_way, k_shot, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
