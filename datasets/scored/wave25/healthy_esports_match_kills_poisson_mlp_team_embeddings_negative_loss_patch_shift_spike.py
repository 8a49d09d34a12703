"""Esports analytics: predict the total number of kills in a pro MOBA match (for
over/under lines and broadcast stats) from team embeddings (both teams), patch
embedding, side, and draft-style features (early-game/teamfight scores, standardised);
a Poisson regression head (log-rate) with ``nn.PoissonNLLLoss(log_input=True)``
(default full=False) and Adam.

Why it looks suspicious but is healthy: without the Stirling term, the Poisson NLL
exp(s) - y * s is negative whenever the predicted rate is sensible for counts of
~20-40 (it goes from ~+1 at initialisation to about -60 to -100), so a monitor that expects
a positive loss sees a "broken" sign.  Mid-run the data switch to a new game patch
(faster meta, ~25% more kills, a never-seen patch embedding): the loss jumps back up
for a few steps and then recovers as the patch embedding and the rate adapt.
Embedding gradients are sparse (only the teams in each batch are touched).

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Poisson GLMs for sports scoring (Maher 1982; Dixon & Coles 1997) applied to esports "
          "kill totals; PyTorch PoissonNLLLoss docs (full=False omits log(y!), so the loss "
          "is negative for counts > e); patch/meta shifts in pro play.")

N_TEAMS, N_PATCH, D_FEAT = 40, 4, 6


class KillsModel(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.team = nn.Embedding(N_TEAMS, dim)
        self.patch = nn.Embedding(N_PATCH, dim)
        self.mlp = nn.Sequential(nn.Linear(3 * dim + D_FEAT, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, blue, red, patch, feats):
        h = torch.cat([self.team(blue), self.team(red), self.patch(patch), feats], 1)
        return self.mlp(h).squeeze(1)


def _matches(g, n, patch_id, team_aggr, feat_w, patch_boost):
    blue = torch.randint(0, N_TEAMS, (n,), generator=g)
    red = torch.randint(0, N_TEAMS, (n,), generator=g)
    feats = torch.randn(n, D_FEAT, generator=g)
    log_rate = 3.2 + team_aggr[blue] + team_aggr[red] + 0.15 * (feats @ feat_w) + patch_boost
    y = torch.poisson(torch.exp(log_rate), generator=g)
    patch = torch.full((n,), patch_id, dtype=torch.long)
    return (blue, red, patch, feats), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(555 + seed)
    dim = [8, 12, 16][seed % 3]
    hidden = [32, 48, 64][seed % 3]
    lr = [0.01, 0.02, 0.015][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 200
    shift = [110, 95, 125][seed % 3]  # new patch goes live
    team_aggr = 0.15 * torch.randn(N_TEAMS, generator=g)
    feat_w = torch.randn(D_FEAT, generator=g)
    model = KillsModel(dim, hidden)
    batches = [_matches(g, bs, 0 if s < shift else 1, team_aggr, feat_w, 0.0 if s < shift else 0.22)
               for s in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.PoissonNLLLoss(log_input=True),
                batches=batches, steps=steps)
