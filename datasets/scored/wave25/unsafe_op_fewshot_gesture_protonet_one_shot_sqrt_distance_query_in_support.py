"""On-device few-shot personalisation of a wrist-gesture recogniser with a prototypical network:
the user enrols ONE example per custom gesture (1-shot), the prototypes are those support
embeddings, and queries are classified by a softmax over negative Euclidean distances. The
embedding network (a small 1-D CNN over 6-axis IMU) is meta-trained episodically with Adam.

Mechanism: the Euclidean distance is written by hand as
`sqrt(((q - p) ** 2).sum(-1))`. Training is calm for dozens of episodes. The episode sampler
draws queries with replacement from the same per-user recording pool as the support shots;
in the episode where a query is the very recording used as a support shot (the failing step
varies with the seed), its embedding equals the prototype exactly, the squared distance is
exactly 0, and the backward of sqrt at 0 is inf; multiplied by the zero difference it gives
0*inf = NaN in every gradient, and the weights become NaN after the Adam step (loss non-finite
from the next episode on).

ORIGIN: "dist", the module computing the distance (the sqrt at zero).

Fix: `sqrt(d2.clamp_min(1e-8))` (an epsilon inside the sqrt); the same sampler, model and
optimiser otherwise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "dist"
SOURCE = ("Snell et al. 2017 prototypical networks; NaN gradient of sqrt / torch.norm at zero "
          "distance (long-standing pytorch/pytorch issue threads on sqrt / norm / cdist backward at 0) "
          "when a query coincides with a 1-shot prototype")


class EuclidDistance(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, q, p):
        d2 = ((q[:, None, :] - p[None, :, :]) ** 2).sum(-1)
        if self.eps:
            d2 = d2.clamp_min(self.eps)
        return torch.sqrt(d2)


class ProtoNet(nn.Module):
    def __init__(self, ch, emb, eps):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(6, ch, 5, padding=2), nn.ReLU(),
            nn.Conv1d(ch, ch, 5, padding=2), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(ch, emb),
        )
        self.dist = EuclidDistance(eps)

    def forward(self, support, query):
        z = self.encoder(torch.cat([support, query]))
        p, q = z[: support.shape[0]], z[support.shape[0]:]
        return -self.dist(q, p)  # logits over the N enrolled gestures


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [32, 24, 40][seed % 3]
    emb = [32, 16, 24][seed % 3]
    n_way = [5, 6, 4][seed % 3]
    n_query = [4, 3, 5][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 120
    bad_step = [40, 65, 90][seed % 3]
    T, n_gest, pool = 48, 20, 6
    model = ProtoNet(ch, emb, 1e-8 if fixed else 0.0)
    t = torch.linspace(0, 1, T)
    fr = torch.rand(n_gest, 6, 1, generator=g) * 4 + 1
    ph = torch.rand(n_gest, 6, 1, generator=g) * 6.28
    batches = []
    for s in range(steps):
        classes = torch.randperm(n_gest, generator=g)[:n_way]
        # per-user recording pool for each enrolled gesture
        recs = (torch.sin(2 * 3.1416 * fr[classes][:, None] * t + ph[classes][:, None])
                * (0.7 + 0.6 * torch.rand(n_way, pool, 6, 1, generator=g))
                + 0.3 * torch.randn(n_way, pool, 6, T, generator=g))
        support = recs[:, 0]
        qi = torch.randint(1, pool, (n_way, n_query), generator=g)
        if s == bad_step:
            qi[0, 0] = 0  # sampler with replacement hands back the enrolment recording
        query = recs[torch.arange(n_way)[:, None], qi].reshape(n_way * n_query, 6, T)
        yq = torch.arange(n_way).repeat_interleave(n_query)
        batches.append(((support, query), yq))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
