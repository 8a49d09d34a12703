"""Healthy: VGAE (Kipf & Welling 2016) on a citation-like graph, full-batch link reconstruction.

Looks alarming: the loss is the pos_weight-ed BCE over the full N x N adjacency (times
Kipf's `norm` factor) plus the KL term divided by N. At initialisation the posterior
std is exp(0)=1 and mu ~ 0, so the KL is near 0; during the first tens of steps the
encoder moves mu away from 0 and log-std down, so the KL term *rises* (0 -> ~0.06-0.09)
while the reconstruction term falls, and after ~30 steps the total sits on a flat
plateau (the weighted reconstruction of a sparse SBM graph has a high floor, ~0.68);
the reparameterised samples also make every step noisy. Node features are sparse
bag-of-words (many exactly zero inputs). None of this is a failure: the loss is finite throughout,
the KL settles and the total loss ends at about half its start.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "tkipf/gae & PyG VGAE example on Cora: norm * BCE(pos_weight) + KL/N, Adam lr 0.01"


class GraphConv(nn.Module):
    def __init__(self, i, o, act=True):
        super().__init__()
        self.lin = nn.Linear(i, o, bias=False)
        self.act = nn.ReLU() if act else nn.Identity()

    def forward(self, x, a_hat):
        return self.act(a_hat @ self.lin(x))


class VGAE(nn.Module):
    def __init__(self, a_hat, f, h, z):
        super().__init__()
        self.register_buffer("a_hat", a_hat)
        self.gc1 = GraphConv(f, h)
        self.gc_mu = GraphConv(h, z, act=False)
        self.gc_logstd = GraphConv(h, z, act=False)

    def forward(self, x, noise):
        h = self.gc1(x, self.a_hat)
        mu = self.gc_mu(h, self.a_hat)
        logstd = self.gc_logstd(h, self.a_hat).clamp(max=10)
        z = mu + noise * logstd.exp()
        return z @ z.t(), mu, logstd


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    N = [160, 120, 200][seed % 3]
    n_comm = [4, 3, 5][seed % 3]
    F_in = [100, 80, 120][seed % 3]
    H, Z = [(32, 16), (24, 8), (48, 16)][seed % 3]
    steps = [150, 120, 180][seed % 3]
    lr = [0.01, 0.01, 0.005][seed % 3]
    comm = torch.randint(0, n_comm, (N,), generator=g)
    p_in, p_out = 0.15, 0.01
    same = comm[:, None] == comm[None, :]
    prob = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    A = (torch.rand(N, N, generator=g) < prob).float().triu(1)
    A = A + A.t()
    # sparse binary bag-of-words features, topic words per community
    topic = torch.rand(n_comm, F_in, generator=g) < 0.15
    x = ((torch.rand(N, F_in, generator=g) < 0.05) | (topic[comm] & (torch.rand(N, F_in, generator=g) < 0.5))).float()
    x = x / x.sum(1, keepdim=True).clamp_min(1)
    A_t = A + torch.eye(N)
    dinv = A_t.sum(1).pow(-0.5)
    a_hat = dinv[:, None] * A_t * dinv[None, :]
    label = A_t
    pos_weight = (N * N - label.sum()) / label.sum()
    norm = N * N / float((N * N - label.sum()) * 2)

    def loss_fn(out, target):
        logits, mu, logstd = out
        recon = norm * F.binary_cross_entropy_with_logits(logits, target, pos_weight=pos_weight)
        kl = -0.5 / N * torch.mean(torch.sum(1 + 2 * logstd - mu ** 2 - logstd.exp() ** 2, 1))
        return recon + kl

    batches = [((x, torch.randn(N, Z, generator=g)), label) for _ in range(steps)]
    model = VGAE(a_hat, F_in, H, Z)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
