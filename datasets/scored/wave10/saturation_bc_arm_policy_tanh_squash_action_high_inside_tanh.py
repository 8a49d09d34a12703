"""Behaviour cloning for a 7-DoF arm reaching task: a ReLU MLP maps the standardised observation
(joint angles, joint velocities, end-effector-to-goal vector) to joint-torque commands; the dataset
stores actions normalised to [-1, 1] (as robomimic / D4RL do) and the policy squashes with tanh.
The port multiplies the logits by the environment's `action_space.high` (40 N*m) INSIDE the tanh -
`torch.tanh(self.head(h) * self.action_high)` - instead of rescaling the unit-range output outside
it (and the data are already normalised, so no rescaling is needed at all). The tanh pre-activations
are ~40x too large, almost every action unit sits at +-1 where tanh' ~ 0, and momentum SGD gets
almost no gradient through the head: the imitation loss stays near its initial value (finite, no
NaN). Fixed: the same network with tanh(head(h)) - pre-activations at their natural scale."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head"
SOURCE = ("action-scale applied inside the tanh squashing of a BC/actor policy (common bug in "
          "SAC/BC ports: tanh(mu*action_high) instead of action_high*tanh(mu)); tanh saturation")

OBS, ACT = 7 + 7 + 3, 7


class TanhPolicy(nn.Module):
    def __init__(self, action_high, hidden=64):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(OBS, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, ACT)
        self.action_high = action_high

    def forward(self, obs):
        return torch.tanh(self.head(self.trunk(obs)) * self.action_high)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TanhPolicy(action_high=1.0 if fixed else 40.0)
    N = 4096
    q = torch.randn(N, 7, generator=g) * 0.8
    qd = torch.randn(N, 7, generator=g) * 0.5
    goal_vec = torch.randn(N, 3, generator=g) * 0.3
    J = torch.randn(3, 7, generator=g) * 0.5             # a fixed 'Jacobian-like' map for the expert
    # expert: PD toward a goal-dependent posture, gravity-like term, torque-limited and normalised
    q_star = goal_vec @ J * 1.5
    tau = 3.0 * (q_star - q) - 1.0 * qd + 2.0 * torch.sin(q)
    act = torch.tanh(tau / 8.0) * 0.9                      # normalised, inside [-0.9, 0.9]
    obs = torch.cat([q, qd, goal_vec], 1)
    obs = (obs - obs.mean(0)) / obs.std(0)
    steps, B = 150, 128
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, N, (B,), generator=g)
        batches.append((obs[idx], act[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
