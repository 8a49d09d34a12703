"""N-pair / InfoNCE metric learning on pairs of views (anchor, positive) of object crops: a bias-free
ReLU encoder (bias-free so the embedding is scale-equivariant, as in several face/re-ID repos)
followed by a hand-written L2 normalisation `z / z.norm(dim=1, keepdim=True)` and a temperature
scaled cosine-similarity matrix with cross-entropy on the diagonal. Mid-run, a batch arrives in
which the detector returned a few empty (all-zero, padded) crops. A bias-free ReLU network maps an
all-zero input to an exactly-zero embedding, its norm is 0 and the normalisation computes 0/0 = NaN;
the NaN similarities poison the loss and the backward pass puts NaN into every weight. Fixed: the
usual safe normalisation, dividing by norm.clamp_min(1e-8) (what F.normalize does)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "l2norm"
SOURCE = "metric-learning repos with manual x / x.norm() (no eps): NaN on zero vectors; F.normalize eps discussion in PyTorch issues"

class L2Norm(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps
    def forward(self, z):
        n = z.norm(dim=1, keepdim=True)
        if self.eps > 0:
            n = n.clamp_min(self.eps)
        return z / n

class PairEncoder(nn.Module):
    def __init__(self, d, hid, emb, depth, eps):
        super().__init__()
        layers, k = [], d
        for _ in range(depth):
            layers += [nn.Linear(k, hid, bias=False), nn.ReLU()]; k = hid
        layers.append(nn.Linear(k, emb, bias=False))
        self.encoder = nn.Sequential(*layers)
        self.l2norm = L2Norm(eps)
    def forward(self, a, p):
        return self.l2norm(self.encoder(a)), self.l2norm(self.encoder(p))

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(71 + seed)
    hid, emb, depth, bs, lr, steps, blank_step, n_blank, tau = [
        (64, 32, 2, 32, 0.05, 120, 66, 2, 0.1), (48, 24, 3, 48, 0.08, 100, 38, 3, 0.07), (96, 32, 2, 24, 0.03, 150, 104, 1, 0.2)][seed]
    d, n_id = 40, 200
    model = PairEncoder(d, hid, emb, depth, 1e-8 if fixed else 0.0)
    protos = torch.randn(n_id, d, generator=g)
    batches = []
    for step in range(steps):
        ids = torch.randperm(n_id, generator=g)[:bs]
        a = protos[ids] + 0.5 * torch.randn(bs, d, generator=g)
        p = protos[ids] + 0.5 * torch.randn(bs, d, generator=g)
        if step == blank_step:
            a[:n_blank] = 0.0
        batches.append(((a, p), torch.arange(bs)))
    def loss_fn(out, y):
        za, zp = out
        return F.cross_entropy(za @ zp.t() / tau, y)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
