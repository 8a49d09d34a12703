"""Deep clustering autoencoder for customer-segment discovery on standardised tabular features: an
MLP autoencoder with a 4-d code and K=6 learnable cluster centres; soft assignments are
q = softmax(-||z - mu_k||^2 / tau) and the loss is reconstruction MSE plus beta * the mean assignment
entropy (to make the segments crisp), with the entropy written as -(q * q.log()).sum(). Early on the
assignments are soft and everything is calm. As the entropy term does its job the codes move onto
their centres and the centres drift apart; once the squared-distance gap to the farthest centre
exceeds ~103*tau (tau = 0.2), exp() in the softmax underflows and some q_k is exactly 0.0. Then q.log() is -inf,
0 * -inf is NaN, and the loss (and every gradient after it) is NaN. Fix: compute the entropy from
log_softmax of the same logits (-(q * log_softmax).sum(), which is finite at q = 0); nothing else
changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "cluster"
SOURCE = ("Deep embedded clustering / IDEC-style autoencoders with an assignment-entropy term; the "
          "well-known 0 * log(0) = NaN in hand-written entropies (use torch.special.xlogy or "
          "log_softmax)")

D, DZ, K, TAU, BETA = 20, 4, 6, 0.2, 0.5


class SoftAssign(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.centres = nn.Parameter(torch.randn(K, DZ))
        self.safe = safe

    def forward(self, z):
        logits = -(z.unsqueeze(1) - self.centres.unsqueeze(0)).pow(2).sum(-1) / TAU
        q = torch.softmax(logits, dim=-1)
        if self.safe:
            entropy = -(q * torch.log_softmax(logits, dim=-1)).sum(-1)
        else:
            entropy = -(q * q.log()).sum(-1)
        return q, entropy


class ClusteringAE(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(D, 48), nn.ReLU(), nn.Linear(48, DZ))
        self.decoder = nn.Sequential(nn.Linear(DZ, 48), nn.ReLU(), nn.Linear(48, D))
        self.cluster = SoftAssign(safe=fixed)

    def forward(self, x):
        z = self.encoder(x)
        q, entropy = self.cluster(z)
        return {"recon": self.decoder(z), "q": q, "entropy": entropy}


def clustering_loss(out, x):
    return F.mse_loss(out["recon"], x) + BETA * out["entropy"].mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, bs, steps = 8192, 128, 250
    seg = torch.randint(0, K, (n,), generator=g)
    protos = 1.5 * torch.randn(K, D, generator=g)
    X = protos[seg] + 0.7 * torch.randn(n, D, generator=g)
    X = (X - X.mean(0)) / X.std(0)
    model = ClusteringAE(fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((X[idx], X[idx]))
    return dict(model=model, optimizer=opt, loss_fn=clustering_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
