"""Discrete-action CQL (Kumar et al. 2020) critic trained offline on a logged replay dataset.

Mechanism: the offline dataset was assembled from several logging runs.  One shard came from
an older logger that stored the *raw game score delta* (hundreds to thousands of points) in the
reward column instead of the clipped reward in [-1, 1].  Every other batch is fine; the one
batch drawn from that shard produces TD errors of ~1e3-1e4, the squared-error gradient is
~1e6x the normal one, and a single SGD step throws the critic's weights far out.  Because the
target network is re-synced from the online network a few steps later, the over-estimated
Q-values are bootstrapped into the targets (max over next actions): the TD loss jumps by
orders of magnitude and either overflows to inf or is still far above its pre-outlier
level at the end of the run.

ORIGIN: None -- no module is at fault; the failure enters through one corrupt batch.

Fix: drop the glitched shard (here: that batch's rewards restored to the clipped range, as a
reward-sanity filter would do); identical model, optimiser, schedule and all other batches.
"""
import copy
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("CQL / offline DQN on logged Atari-style replay (Kumar et al. 2020; d4rl/dqn-replay); "
          "reports of offline Q-learning diverging after mixing a replay shard whose reward "
          "column held raw score deltas instead of clipped rewards")


class CQLCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, width, sync_every, gamma):
        super().__init__()
        self.q = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU(),
                               nn.Linear(width, width), nn.ReLU(),
                               nn.Linear(width, n_actions))
        self.q_target = copy.deepcopy(self.q)
        for p in self.q_target.parameters():
            p.requires_grad_(False)
        self.sync_every = sync_every
        self.gamma = gamma
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, obs, act, rew, next_obs, done):
        if self.training:
            if int(self.calls) % self.sync_every == 0:
                self.q_target.load_state_dict(self.q.state_dict())
            self.calls += 1
        q_all = self.q(obs)
        q_sa = q_all.gather(1, act[:, None]).squeeze(1)
        with torch.no_grad():
            target = rew + self.gamma * (1 - done) * self.q_target(next_obs).max(1).values
        return q_all, q_sa, target


def make_cql_loss(alpha):
    def loss_fn(out, _unused):
        q_all, q_sa, target = out
        td = ((q_sa - target) ** 2).mean()
        cql = (torch.logsumexp(q_all, 1) - q_sa).mean()
        return td + alpha * cql
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(obs=10, nA=4, width=64, bs=64, lr=0.01, steps=120, bad=30, scale=900.0, sync=10),
           dict(obs=12, nA=6, width=96, bs=32, lr=0.005, steps=100, bad=52, scale=2500.0, sync=8),
           dict(obs=8, nA=3, width=48, bs=128, lr=0.02, steps=150, bad=17, scale=1500.0, sync=15),
           ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    model = CQLCritic(cfg["obs"], cfg["nA"], cfg["width"], cfg["sync"], gamma=0.8)

    # logged transitions of a synthetic control task: reward depends on a hidden linear score
    w_r = torch.randn(cfg["obs"], cfg["nA"], generator=g) / cfg["obs"] ** 0.5
    dyn = torch.linalg.qr(torch.randn(cfg["nA"], cfg["obs"], cfg["obs"], generator=g))[0]
    batches = []
    for i in range(cfg["steps"]):
        n = cfg["bs"]
        obs = torch.randn(n, cfg["obs"], generator=g)
        act = torch.randint(0, cfg["nA"], (n,), generator=g)
        next_obs = torch.tanh(1.5 * torch.einsum("nij,nj->ni", dyn[act], obs))
        rew = torch.tanh(2.5 * (obs @ w_r).gather(1, act[:, None]).squeeze(1))  # clipped to [-1, 1]
        done = (torch.rand(n, generator=g) < 0.2).float()
        jitter = torch.rand(n, generator=g)  # drawn for every batch: same stream either way
        if i == cfg["bad"] and not fixed:
            # shard from the old logger: raw score deltas instead of clipped rewards
            rew = torch.round(rew * cfg["scale"] + cfg["scale"] * jitter)
        batches.append(((obs, act, rew, next_obs, done), torch.zeros(n)))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_cql_loss(alpha=0.1), batches=batches,
                steps=cfg["steps"])
