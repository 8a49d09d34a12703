"""Fitted-Q-iteration regression of a DQN-style Q-network (MLP, one output per
action, Q(s,a) gathered for the taken action) on raw logged states: cart
position in metres in the thousands, velocities in tens, fuel in hundreds,
and raw discounted reward-sum targets in the thousands.  With SGD+momentum at
an lr that is ordinary for normalised data, the gradients are ~1e6x too large
and the run diverges from the first steps.
fixed=True: states standardised with dataset mean/std and targets standardised
(z-scored) -- same transitions, same network, same optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Known DQN pitfall (e.g. SB3 / DQN tutorials and Q&A threads 'DQN loss explodes, "
          "Q-values diverge'): observations and returns not normalised, raw env units fed to "
          "the Q-network; fix = observation normalisation and reward/return scaling")

N_ACT = 4
STATE_DIM = 6
B = 128


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(STATE_DIM, 128), nn.ReLU(),
            nn.Linear(128, 128), nn.ReLU(),
        )
        self.q_head = nn.Linear(128, N_ACT)

    def forward(self, states, actions):
        q = self.q_head(self.body(states))
        return q.gather(1, actions.unsqueeze(1)).squeeze(1)


def _dataset(seed, n):
    g = torch.Generator().manual_seed(500 + seed)
    pos = 2000.0 + 1500.0 * torch.rand(n, 2, generator=g)         # metres
    vel = 20.0 * torch.randn(n, 2, generator=g)                     # m/s
    fuel = 100.0 + 400.0 * torch.rand(n, 1, generator=g)            # litres
    heading = torch.rand(n, 1, generator=g) * 6.283                 # radians
    s = torch.cat([pos, vel, fuel, heading], dim=1)
    a = torch.randint(0, N_ACT, (n,), generator=g)
    # fitted-Q targets, precomputed once (frozen target network stand-in):
    # reward-to-go depends on distance to a goal, speed, fuel and the action taken
    goal = torch.tensor([2600.0, 2900.0])
    dist = (pos - goal).norm(dim=1)
    speed = vel.norm(dim=1)
    act_bonus = torch.tensor([0.0, 150.0, -120.0, 60.0])[a]
    ret = (3000.0 - 1.2 * dist + 2.0 * fuel.squeeze(1) - 8.0 * speed
           + act_bonus * torch.cos(heading.squeeze(1)) + 30.0 * torch.randn(n, generator=g))
    return s, a, ret


def _loss(q_sa, target):
    return F.mse_loss(q_sa, target)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps = 200
    s, a, ret = _dataset(seed, steps * B)
    if fixed:
        s = (s - s.mean(0)) / s.std(0)
        ret = (ret - ret.mean()) / ret.std()
    batches = []
    for i in range(steps):
        sl = slice(i * B, (i + 1) * B)
        batches.append(((s[sl], a[sl]), ret[sl]))
    model = QNet()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
