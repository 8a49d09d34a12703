"""Double DQN with Huber TD loss on a fixed replay buffer from a 6x6 gridworld (-1 per move).
The target network is hard-copied from the online one every SYNC optimizer steps (a step post-hook,
as DQN code counts gradient updates). Each sync moves the bootstrapped targets to what the online
net has learned meanwhile, so the TD loss jumps after every sync and then decays again: a normal,
healthy saw-tooth DQN loss. fixed=True changes nothing (there is no fault).
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mnih et al. 2015 DQN / van Hasselt et al. 2016 Double DQN: hard target-network update "
          "every C steps; the well-known saw-tooth TD loss that jumps at each sync (PyTorch DQN "
          "tutorial, SB3 DQN target_update_interval)")

SIZE = 6
N_ACT = 4
GAMMA = 0.9
SYNC = 40


def _gridworld_buffer(gen, n):
    """Transitions of a uniform random policy; -1 per move, the goal corner ends the episode."""
    pos = torch.randint(0, SIZE, (n, 2), generator=gen)
    act = torch.randint(0, N_ACT, (n,), generator=gen)
    moves = torch.tensor([[0, 1], [0, -1], [1, 0], [-1, 0]])
    slip = torch.rand(n, generator=gen) < 0.1          # 10% slippery: stay in place
    nxt = (pos + moves[act] * (~slip).long().unsqueeze(1)).clamp(0, SIZE - 1)
    goal = torch.tensor([SIZE - 1, SIZE - 1])
    done = (nxt == goal).all(1).float()
    rew = -1.0 + done                                  # -1 per move, 0 on reaching the goal
    start_at_goal = (pos == goal).all(1)
    keep = ~start_at_goal
    return pos[keep], act[keep], nxt[keep], rew[keep], done[keep]


def _features(pos):
    """Observation: one-hot row and one-hot column plus scaled coordinates."""
    row = F.one_hot(pos[:, 0], SIZE).float()
    col = F.one_hot(pos[:, 1], SIZE).float()
    xy = pos.float() / (SIZE - 1) * 2 - 1
    return torch.cat([row, col, xy], 1)


class QNet(nn.Module):
    def __init__(self, d_in, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, N_ACT))

    def forward(self, x):
        return self.net(x)


class DoubleDQN(nn.Module):
    def __init__(self, d_in):
        super().__init__()
        self.online = QNet(d_in)
        self.target = copy.deepcopy(self.online)
        for p in self.target.parameters():
            p.requires_grad_(False)

    def sync(self):
        self.target.load_state_dict(self.online.state_dict())

    def forward(self, obs, act, next_obs):
        q_sa = self.online(obs).gather(1, act.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            a_star = self.online(next_obs).argmax(1, keepdim=True)     # online selects
            q_next = self.target(next_obs).gather(1, a_star).squeeze(1)  # target evaluates
        return q_sa, q_next


def td_huber_loss(out, target):
    q_sa, q_next = out
    rew, done = target
    y = rew + GAMMA * (1.0 - done) * q_next
    return F.smooth_l1_loss(q_sa, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps, batch = 240, 128
    pos, act, nxt, rew, done = _gridworld_buffer(gen, 20000)
    obs, next_obs = _features(pos), _features(nxt)
    model = DoubleDQN(obs.shape[1])
    lr = 1e-3 * (1.0 + 0.2 * (seed % 3))
    optimizer = torch.optim.Adam(model.online.parameters(), lr=lr)

    counter = {"n": 0}

    def hard_update(opt, args, kwargs):
        counter["n"] += 1
        if counter["n"] % SYNC == 0:
            model.sync()

    optimizer.register_step_post_hook(hard_update)

    batches = []
    for _ in range(steps):
        idx = torch.randint(0, obs.shape[0], (batch,), generator=gen)
        batches.append(((obs[idx], act[idx], next_obs[idx]), (rew[idx], done[idx])))
    return dict(model=model, optimizer=optimizer, loss_fn=td_huber_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
