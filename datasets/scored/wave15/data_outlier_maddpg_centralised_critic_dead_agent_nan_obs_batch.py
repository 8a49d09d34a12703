"""MADDPG centralised critic Q(o_1..o_N, a_1..a_N) trained offline from a fixed replay dump
(multi-agent particle 'simple_spread'-like data) against precomputed n-step return targets.

Mechanism: the replay dump was written by an env wrapper that fills the observation of an agent
that has already terminated with NaN (np.full(obs_dim, np.nan)) instead of zeros.  Almost every
episode keeps all agents alive, but one sampled batch contains transitions where an agent is
dead.  The NaN observations go straight through the critic, the MSE becomes NaN, Adam's moments
become NaN and every parameter is NaN from then on.

ORIGIN: None -- corrupt data, not a module.
Fix: the dead-agent observations are zero-filled (the PettingZoo convention) in that batch
(fixed=True); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("openai/maddpg & PettingZoo MPE; issues about NaN critic loss traced to NaN-padded "
          "observations of terminated agents in the replay buffer.")


class CentralCritic(nn.Module):
    def __init__(self, n_agents, obs_dim, act_dim, h):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_agents * (obs_dim + act_dim), h), nn.ReLU(),
            nn.Linear(h, h), nn.ReLU(),
            nn.Linear(h, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs.flatten(1), act.flatten(1)], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=3, od=10, ad=2, h=128, lr=1e-3, bs=64, steps=120, bad=57),
           dict(n=4, od=8, ad=2, h=64, lr=3e-3, bs=32, steps=100, bad=31),
           dict(n=2, od=12, ad=5, h=96, lr=5e-4, bs=128, steps=140, bad=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 11)
    n, od, ad = cfg["n"], cfg["od"], cfg["ad"]
    model = CentralCritic(n, od, ad, cfg["h"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    wo = torch.randn(n, od, generator=g) / od ** 0.5
    wa = torch.randn(n, ad, generator=g) / ad ** 0.5
    batches = []
    for i in range(cfg["steps"]):
        obs = torch.randn(cfg["bs"], n, od, generator=g)
        act = torch.rand(cfg["bs"], n, ad, generator=g) * 2 - 1
        # n-step return of the shared reward: -distance-like, depends on all agents jointly
        ret = -(obs * wo).sum(-1).abs().sum(-1) + (act * wa).sum((-1, -2)) - 0.3 * (act ** 2).sum((-1, -2))
        if i == cfg["bad"]:
            dead = torch.arange(cfg["bs"]) % 5 == 0
            fill = 0.0 if fixed else float("nan")
            obs[dead, n - 1] = fill
        batches.append(((obs, act), ret))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
