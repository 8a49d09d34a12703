"""Categorical VAE with the Gumbel-softmax (Concrete) relaxation on 24-bit binary patterns
produced by a handful of prototypes with bit noise (every bit marginal is exactly 0.5). The
relaxed sample is softmax((logits + gumbel) / tau); the run starts directly at the low
temperature tau = 0.004-0.008 that the schedule was supposed to anneal to. Dividing by tau blows
the softmax pre-activations up by 100-200x, the relaxed sample is a hard one-hot for almost every
draw, the softmax Jacobian is ~0 and no gradient reaches the encoder; the decoder only sees
random codes and can only learn the ~0.5 bit marginals, so the reconstruction loss stays at
~24*log 2 - a silent plateau without NaN. The fixed run uses tau = 1 (the usual starting
temperature), i.e. only shrinks the pre-activations of the relaxed softmax."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "sampler"
SOURCE = ("Gumbel-softmax / Concrete relaxation (Jang et al. 2017; Maddison et al. 2017): low "
          "temperatures give (near) zero / high-variance gradients, hence tau annealing from 1; "
          "'categorical VAE does not learn with tau=0.1' forum reports")


class GumbelSoftmax(nn.Module):
    def __init__(self, tau):
        super().__init__()
        self.tau = tau

    def forward(self, logits):
        u = torch.rand_like(logits).clamp(1e-9, 1 - 1e-9)
        gumb = -torch.log(-torch.log(u))
        return F.softmax((logits + gumb) / self.tau, dim=-1)


class CatVAE(nn.Module):
    def __init__(self, D, K, width, tau):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(D, width), nn.ReLU(), nn.Linear(width, K))
        self.sampler = GumbelSoftmax(tau)
        self.decoder = nn.Sequential(nn.Linear(K, width), nn.ReLU(), nn.Linear(width, D))

    def forward(self, x):
        logits = self.encoder(x)
        z = self.sampler(logits)
        return {"recon_logits": self.decoder(z), "q_logits": logits}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    D = 24
    K = [8, 10, 12][seed % 3]
    width = [64, 48, 96][seed % 3]
    batch = [64, 128, 96][seed % 3]
    steps = [200, 240, 180][seed % 3]
    tau = 1.0 if fixed else [0.004, 0.008, 0.005][seed % 3]

    n_proto = K
    # balanced prototypes: every bit is on in exactly half of them (marginals = 0.5)
    half = torch.cat([torch.ones(n_proto // 2), torch.zeros(n_proto - n_proto // 2)])
    protos = torch.stack([half[torch.randperm(n_proto, generator=g)] for _ in range(D)], 1)
    batches = []
    for _ in range(steps):
        c = torch.randint(0, n_proto, (batch,), generator=g)
        flip = (torch.rand(batch, D, generator=g) < 0.05).float()
        x = (protos[c] + flip) % 2
        batches.append((x, x))

    model = CatVAE(D, K, width, tau)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(out, x):
        rec = F.binary_cross_entropy_with_logits(out["recon_logits"], x, reduction="sum") / x.shape[0]
        q = F.softmax(out["q_logits"], -1)
        kl = (q * (F.log_softmax(out["q_logits"], -1) + torch.log(torch.tensor(float(K))))).sum(-1).mean()
        return rec + kl

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
