"""Energy-based anomaly model for multivariate process-sensor snapshots: an MLP energy E(x) is
trained contrastively to assign low energy to observed (normal) snapshots and high energy to
"negative" samples drawn from a broad Gaussian over the standardised sensor space, with the
squared-energy regulariser of Du & Mordatch (2019) to keep energies bounded:
  loss = mean E(x+) - mean E(x-) + alpha * (mean E(x+)^2 + mean E(x-)^2).
The loss starts near 0 and goes *negative* (it is an energy gap, not a likelihood), heading for its
lower bound -1/(2 alpha) = -2 as the energies separate; nothing is wrong -- the regulariser keeps it
finite.  A healthy run that looks alarming to anyone expecting a positive loss.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Du & Mordatch 2019 'Implicit Generation and Generalization in Energy-Based Models' "
          "(contrastive energy loss with L2 energy regularisation); LeCun et al. 2006 'A Tutorial on "
          "Energy-Based Learning'")

N_FEAT, ALPHA = 12, 0.25


class EnergyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(N_FEAT, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(),
                                    nn.Linear(64, 1))

    def forward(self, x_pos, x_neg):
        return {"pos": self.energy(x_pos).squeeze(-1), "neg": self.energy(x_neg).squeeze(-1)}


def energy_loss(out, _):
    ep, en = out["pos"], out["neg"]
    return ep.mean() - en.mean() + ALPHA * ((ep ** 2).mean() + (en ** 2).mean())


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(4, N_FEAT, generator=g)                 # normal data: 4-d latent manifold
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        z = torch.randn(bs, 4, generator=g)
        x_pos = torch.tanh(z @ A) * 1.5 + 0.05 * torch.randn(bs, N_FEAT, generator=g)
        x_neg = 1.5 * torch.randn(bs, N_FEAT, generator=g)
        batches.append(((x_pos, x_neg), torch.zeros(bs)))
    model = EnergyNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=energy_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
