"""Healthy: DAgger (Ross et al. 2011) imitation of a saturated PD altitude controller for
a quadrotor, with a GRU policy over a short history of noisy (altitude error, vertical
velocity, battery sag) measurements predicting the normalised collective thrust.

Why it looks alarming: DAgger trains in rounds.  After each round the learner is rolled
out, the states it visits are labelled by the expert and *aggregated* into the dataset.
Early rounds only contain near-hover states where the expert is linear; later rounds add
the learner's own drift -- large altitude errors and climb rates where the expert's thrust
saturates at 0 or 1 and the mapping is strongly nonlinear.  So at round boundaries the
loss jumps up (up to ~5-8x) and then decays again; the loss curve is a saw-tooth and
the final loss on the aggregated data is no lower than what round 0 already reached --
it looks like training stopped making progress after the first round.  Nothing is wrong:
the task distribution deliberately gets harder; within each round the loss falls and the
policy keeps improving on the aggregate.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DAgger (Ross, Gordon, Bagnell, AISTATS 2011) for learned quadrotor controllers "
          "(e.g. Ross et al. 2013 MAV obstacle avoidance; Kaufmann et al. 'Deep drone "
          "acrobatics' 2020 imitation of an MPC expert); saw-tooth loss at aggregation rounds")


class GRUPolicy(nn.Module):
    def __init__(self, obs_dim, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(obs_dim, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, obs_hist):
        h, _ = self.gru(obs_hist)
        return self.head(h[:, -1])


def _expert(e, v, batt):
    hover = 0.45 / batt                      # more thrust command needed when the battery sags
    return (hover - 0.35 * e - 0.25 * v).clamp(0.0, 1.0)


def _round_states(g, n, K, spread, dt=0.05):
    # short trajectories around the states visited in this DAgger round
    e0 = spread * torch.randn(n, generator=g)
    v0 = 0.8 * spread * torch.randn(n, generator=g)
    batt = 0.85 + 0.15 * torch.rand(n, generator=g)
    acc = 0.5 * spread * torch.randn(n, generator=g)
    t = torch.arange(-K + 1, 1).float() * dt
    v = v0[:, None] + acc[:, None] * t[None]
    e = e0[:, None] + v0[:, None] * t[None] + 0.5 * acc[:, None] * t[None] ** 2
    obs = torch.stack([e + 0.02 * torch.randn(n, K, generator=g),
                       v + 0.05 * torch.randn(n, K, generator=g),
                       batt[:, None].expand(n, K)], -1)
    return obs, _expert(e0, v0, batt)[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=32, layers=1, K=8, bs=64, lr=3e-3, rounds=4, per_round=40),
           dict(hidden=48, layers=2, K=10, bs=48, lr=2e-3, rounds=3, per_round=50),
           dict(hidden=32, layers=1, K=6, bs=96, lr=4e-3, rounds=5, per_round=30)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11 + seed)
    model = GRUPolicy(3, cfg["hidden"], cfg["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for r in range(cfg["rounds"]):
        for _ in range(cfg["per_round"]):
            # sample uniformly from the aggregated dataset D_0 u ... u D_r
            which = torch.randint(0, r + 1, (cfg["bs"],), generator=g)
            obs_parts, act_parts = [], []
            for k in range(r + 1):
                m = int((which == k).sum())
                if m:
                    o, a = _round_states(g, m, cfg["K"], 0.3 * 2.2 ** k)
                    obs_parts.append(o)
                    act_parts.append(a)
            batches.append((torch.cat(obs_parts), torch.cat(act_parts)))
    steps = cfg["rounds"] * cfg["per_round"]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
