"""APPNP node classifier: an MLP predicts per-node logits that are then propagated K times with
personalised PageRank over a symmetric-normalised adjacency. The training recipe copies the
learning rate of a logistic-regression baseline (plain SGD, lr in the tens) onto the MLP; each update
overshoots, the logits explode and the cross-entropy climbs to tens of nats and stays there (the
ReLU MLP ends up emitting huge, wrong, nearly constant logits; everything stays finite, no NaN).
Fix: a conventional SGD learning rate."""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "APPNP (Klicpera et al. 2019) node classification; common forum reports of NaN loss after copying a linear-model SGD lr to a GNN"
class APPNP(nn.Module):
    def __init__(s, d_in, h, c, K, alpha):
        super().__init__(); s.mlp = nn.Sequential(nn.Linear(d_in, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, c)); s.K = K; s.alpha = alpha
    def forward(s, x, A):
        h0 = s.mlp(x); h = h0
        for _ in range(s.K): h = (1 - s.alpha) * (A @ h) + s.alpha * h0
        return h
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    n, d_in, c = 120 + 40 * seed, 16, 4; h = 32 + 16 * seed; K = 5 + seed
    steps = 80
    labels = torch.randint(0, c, (n,), generator=g)
    centers = torch.randn(c, d_in, generator=g) * 1.5
    x = centers[labels] + torch.randn(n, d_in, generator=g)
    same = (labels[:, None] == labels[None, :]).float()
    p = 0.08 * same + 0.01
    A = (torch.rand(n, n, generator=g) < p).float(); A = ((A + A.T) > 0).float(); A.fill_diagonal_(1.0)
    dinv = A.sum(1).rsqrt(); A = dinv[:, None] * A * dinv[None, :]
    model = APPNP(d_in, h, c, K, 0.1)
    lr = 0.2 if fixed else [40.0, 60.0, 80.0][seed]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [((x, A), labels)] * steps
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y), batches=batches, steps=steps, amp_dtype=None, scaler=None)
