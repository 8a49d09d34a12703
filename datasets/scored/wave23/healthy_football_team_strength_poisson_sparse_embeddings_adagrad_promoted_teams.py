"""Healthy: football team-strength Poisson model with sparse embeddings, Adagrad, season-change spikes.

Model: a Maher / Dixon-Coles style goals model, written as a small network: attack and defence
strengths are ``nn.Embedding(..., sparse=True)`` rows per team, a home-advantage term and a tiny
MLP on match context (rest days, derby, travel distance) adjust the log-rates, and the loss is
``PoissonNLLLoss(log_input=True)`` on (home goals, away goals). Trained with Adagrad (which
accepts the sparse gradients) over three seasons of matchweeks.

What a naive monitor would flag: (1) the embedding gradients are sparse -- each step touches
only the 20 teams playing that matchweek, and the rows of relegated or not-yet-promoted teams
get exactly zero gradient for whole seasons; (2) at each season change three promoted teams
(rows never trained, still at their N(0,1) init) enter the league, and in some seasons the loss
jumps for a few matchweeks (up to ~1.8 against ~0.7-1.0 before) until Adagrad pulls their
strengths into line; (3) with only 10 matches per step the loss is very noisy, and the
non-full Poisson NLL (no Stirling term) goes negative on high-scoring matchweeks.

Why it is healthy: every gradient is finite, the jumps come from genuinely unseen teams and
recover, and the loss ends well below where it started.

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Maher 1982 / Dixon & Coles 1997 Poisson team-strength models; PyTorch docs on "
          "nn.Embedding(sparse=True) with optimizers that support sparse gradients (Adagrad, "
          "SparseAdam); promoted-team cold start in league forecasting")

N_TEAMS = 26          # 20 in the league at a time; 6 move up/down over the seasons


class TeamStrength(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.attack = nn.Embedding(N_TEAMS, 1, sparse=True)
        self.defence = nn.Embedding(N_TEAMS, 1, sparse=True)
        self.home_adv = nn.Parameter(torch.zeros(1))
        self.base = nn.Parameter(torch.zeros(1))
        self.ctx = nn.Sequential(nn.Linear(3, hid), nn.Tanh(), nn.Linear(hid, 2))

    def forward(self, home, away, ctx):
        adj = self.ctx(ctx)
        lh = self.base + self.home_adv + self.attack(home)[:, 0] - self.defence(away)[:, 0] + adj[:, 0]
        la = self.base + self.attack(away)[:, 0] - self.defence(home)[:, 0] + adj[:, 1]
        return torch.stack([lh, la], 1)                          # log-rates


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(18000 + seed)
    hid = [8, 16, 12][seed % 3]
    lr = [0.1, 0.15, 0.08][seed % 3]
    weeks = [38, 34, 30][seed % 3]                 # matchweeks per season (league format)
    seasons = 3
    steps = weeks * seasons
    torch.manual_seed(seed)
    model = TeamStrength(hid)
    att = 0.5 * torch.randn(N_TEAMS, generator=g)
    dfn = 0.5 * torch.randn(N_TEAMS, generator=g)
    perm = torch.randperm(N_TEAMS, generator=g)
    att[perm[20:]] -= 0.5                          # promoted sides are usually weaker
    dfn[perm[20:]] -= 0.5
    leagues = [perm[:20], torch.cat([perm[:17], perm[20:23]]), torch.cat([perm[:14], perm[20:26]])]
    batches = []
    for s in range(seasons):
        teams = leagues[s]
        for w in range(weeks):
            p = teams[torch.randperm(20, generator=g)]
            home, away = p[:10], p[10:]
            ctx = torch.stack([torch.randn(10, generator=g),                 # rest-day difference
                               (torch.rand(10, generator=g) < 0.1).float(),  # derby
                               torch.rand(10, generator=g)], 1)              # travel (scaled)
            lh = 0.15 + 0.25 + att[home] - dfn[away] + 0.1 * ctx[:, 0] - 0.2 * ctx[:, 2]
            la = 0.15 + att[away] - dfn[home] - 0.1 * ctx[:, 0] + 0.15 * ctx[:, 1]
            goals = torch.poisson(torch.exp(torch.stack([lh, la], 1)), generator=g)
            batches.append(((home, away, ctx), goals))
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.PoissonNLLLoss(log_input=True),
                batches=batches, steps=steps)
