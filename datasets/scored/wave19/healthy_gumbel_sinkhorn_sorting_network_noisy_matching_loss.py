"""Healthy run: Gumbel-Sinkhorn network for learning to sort (Mena, Belanger, Linderman &
Snoek, ICLR 2018). A shared MLP maps each of the n input numbers to a row of log-assignment
scores over the n output positions; Gumbel noise is added, log-domain Sinkhorn (20 iterations,
temperature tau) turns them into a soft permutation P, and the loss is the MSE between
P^T x (the softly re-ordered inputs) and the sorted sequence.

Why it looks alarming but is fine:
- a fresh Gumbel sample each step (pre-drawn, part of the batch) makes the loss jumpy, and the
  soft permutation is near-uniform at first, so the first steps barely move (even go up);
- after the fast phase the loss flattens on a small noise floor set by the Gumbel
  perturbation (it is never 0), which can look like a stall in the second half of the run;
- per-element ReLU features with many inactive units.
The loss falls steadily (rank structure is learned), well below the initial level.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Gumbel-Sinkhorn networks (Mena et al. 2018, google/gumbel_sinkhorn) sorting task "
          "re-implemented in PyTorch")


def log_sinkhorn(log_alpha, iters):
    for _ in range(iters):
        log_alpha = log_alpha - torch.logsumexp(log_alpha, 2, keepdim=True)
        log_alpha = log_alpha - torch.logsumexp(log_alpha, 1, keepdim=True)
    return log_alpha.exp()


class GumbelSinkhornSorter(nn.Module):
    def __init__(self, n, h, tau, noise_scale):
        super().__init__()
        self.tau, self.noise_scale = tau, noise_scale
        self.net = nn.Sequential(nn.Linear(1, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                                 nn.Linear(h, n))

    def forward(self, x, gumbel):
        log_alpha = self.net(x.unsqueeze(-1))                       # B, n(items), n(positions)
        P = log_sinkhorn((log_alpha + self.noise_scale * gumbel) / self.tau, 20)
        return torch.einsum("bip,bi->bp", P, x)                     # softly sorted sequence


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=8, h=32, B=64, tau=1.0, noise=1.0, lr=1e-2, steps=150),
           dict(n=12, h=64, B=32, tau=0.7, noise=0.5, lr=5e-3, steps=160),
           dict(n=6, h=48, B=96, tau=1.0, noise=1.0, lr=8e-3, steps=120)][seed % 3]
    torch.manual_seed(seed)
    model = GumbelSinkhornSorter(cfg["n"], cfg["h"], cfg["tau"], cfg["noise"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(600 + seed)
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.rand(cfg["B"], cfg["n"], generator=g)
        u = torch.rand(cfg["B"], cfg["n"], cfg["n"], generator=g).clamp(1e-10, 1 - 1e-7)
        gumbel = -torch.log(-torch.log(u))
        batches.append(((x, gumbel), torch.sort(x, 1).values))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
