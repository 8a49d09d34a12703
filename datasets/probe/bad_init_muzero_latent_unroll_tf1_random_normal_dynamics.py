"""MuZero-style value-equivalent model (representation, dynamics unrolled K=10 steps, reward and
value heads) trained on fixed point-mass trajectories. The dynamics MLP, ported from TF1, uses
tf.random_normal_initializer()'s default stddev=1.0: each 256-wide ReLU layer multiplies the latent
scale by ~sqrt(256/2), two layers per unroll step and ten steps grow it geometrically to ~1e20, and
the squared reward/value errors overflow at step 0. fixed=True: Kaiming-normal init of the dynamics.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "dynamics"
SOURCE = ("Schrittwieser et al. 2020 MuZero (recurrent dynamics unroll, K steps); TF1 "
          "tf.random_normal_initializer default stddev=1.0 copied into PyTorch ports as "
          "nn.init.normal_(w, 0, 1); He et al. 2015 on geometric growth of activation scale")

K = 10
GAMMA = 0.9
N_ACT = 5
OBS_DIM = 6
EP_LEN = 40


def _point_mass_episodes(gen, n_eps):
    pos = torch.rand(n_eps, 2, generator=gen) * 2 - 1
    vel = torch.zeros(n_eps, 2)
    goal = torch.rand(n_eps, 2, generator=gen) * 2 - 1
    moves = torch.tensor([[0., 0.], [1., 0.], [-1., 0.], [0., 1.], [0., -1.]])
    obs_l, act_l, rew_l = [], [], []
    for _ in range(EP_LEN):
        obs_l.append(torch.cat([pos, vel, goal], 1))
        # behaviour: move towards the goal 60% of the time, random otherwise
        greedy = torch.where((goal - pos)[:, 0].abs() > (goal - pos)[:, 1].abs(),
                             torch.where(goal[:, 0] > pos[:, 0], 1, 2),
                             torch.where(goal[:, 1] > pos[:, 1], 3, 4))
        rand = torch.randint(0, N_ACT, (n_eps,), generator=gen)
        a = torch.where(torch.rand(n_eps, generator=gen) < 0.6, greedy, rand)
        vel = 0.7 * vel + 0.1 * moves[a]
        pos = (pos + vel).clamp(-1.2, 1.2)
        act_l.append(a)
        rew_l.append(-(pos - goal).norm(dim=1))
    obs, act, rew = torch.stack(obs_l, 1), torch.stack(act_l, 1), torch.stack(rew_l, 1)
    ret = torch.zeros_like(rew)        # discounted value targets (MC to episode end)
    run = torch.zeros(n_eps)
    for t in reversed(range(EP_LEN)):
        run = rew[:, t] + GAMMA * run
        ret[:, t] = run
    return obs, act, rew, ret


class Representation(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, hidden))

    def forward(self, obs):
        return self.net(obs)


class Dynamics(nn.Module):
    def __init__(self, hidden=256, tf1_port=True):
        super().__init__()
        self.fc1 = nn.Linear(hidden + N_ACT, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        for fc in (self.fc1, self.fc2):
            if tf1_port:
                nn.init.normal_(fc.weight, mean=0.0, std=1.0)   # tf.random_normal_initializer()
            else:
                nn.init.kaiming_normal_(fc.weight, nonlinearity="relu")
            nn.init.zeros_(fc.bias)

    def forward(self, state, action):
        x = torch.cat([state, F.one_hot(action, N_ACT).float()], 1)
        return F.relu(self.fc2(F.relu(self.fc1(x))))


class MuZeroModel(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.representation = Representation()
        self.dynamics = Dynamics(tf1_port=not fixed)
        self.reward_head = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 1))
        self.value_head = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, obs0, actions):
        s = self.representation(obs0)
        values = [self.value_head(s)]
        rewards = []
        for k in range(actions.shape[1]):
            s = self.dynamics(s, actions[:, k])
            rewards.append(self.reward_head(s))
            values.append(self.value_head(s))
        return torch.cat(rewards, 1), torch.cat(values, 1)


def unroll_loss(out, target):
    r_pred, v_pred = out
    r_tgt, z_tgt = target
    return F.mse_loss(r_pred, r_tgt) + 0.25 * F.mse_loss(v_pred, z_tgt)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    obs, act, rew, ret = _point_mass_episodes(gen, 512)
    model = MuZeroModel(fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, batch = 150, 64
    batches = []
    for _ in range(steps):
        ep = torch.randint(0, obs.shape[0], (batch,), generator=gen)
        t0 = torch.randint(0, EP_LEN - K, (batch,), generator=gen)
        win = t0.unsqueeze(1) + torch.arange(K).unsqueeze(0)          # t0 .. t0+K-1
        vwin = t0.unsqueeze(1) + torch.arange(K + 1).unsqueeze(0)     # t0 .. t0+K
        obs0 = obs[ep, t0]
        acts = act[ep.unsqueeze(1), win]
        r_tgt = rew[ep.unsqueeze(1), win]
        z_tgt = ret[ep.unsqueeze(1), vwin]
        batches.append(((obs0, acts), (r_tgt, z_tgt)))
    return dict(model=model, optimizer=optimizer, loss_fn=unroll_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
