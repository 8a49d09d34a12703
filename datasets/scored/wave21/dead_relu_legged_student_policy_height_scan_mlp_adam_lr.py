"""Legged-locomotion student policy (ANYmal / "learning to walk in minutes" style): an MLP
over proprioception (48-d) + a sampled terrain height scan (52-d) with ReLU hidden layers,
distilled from a teacher by behaviour cloning of the 12 joint-position targets with Adam.
The user raised Adam's lr to 0.2-0.3 "to speed up distillation".

Mechanism: the large early Adam steps (each ~lr per weight, in a consistent sign) push
the biases/weights of the first hidden layer so that its pre-activations become negative
for every observation; the first ReLU outputs zero everywhere, the gradient to everything
below and to most of the network vanishes and the action output freezes at its bias: the
loss plateaus.
ORIGIN: the first ReLU (policy.1), the layer whose units die.
Fix: lr = 1e-3.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "policy.1"
SOURCE = "legged_gym / rsl_rl teacher-student distillation reports: student MLP outputs constant actions after raising Adam learning rate; dead ReLU units"


class StudentPolicy(nn.Module):
    def __init__(self, mlp):
        super().__init__()
        self.policy = mlp

    def forward(self, obs):
        return self.policy(obs)


def build(seed: int, fixed: bool = False) -> dict:
    hidden, lr, B = [((128, 64), 0.2, 32), ((96, 64, 32), 0.25, 48), ((128, 64), 0.3, 24)][seed % 3]
    if fixed:
        lr = 1e-3
    torch.manual_seed(seed)
    layers, d = [], 100
    for h in hidden:
        layers += [nn.Linear(d, h), nn.ReLU()]
        d = h
    layers.append(nn.Linear(d, 12))
    policy = StudentPolicy(nn.Sequential(*layers))
    g = torch.Generator().manual_seed(6000 + seed)
    teacher = torch.randn(100, 12, generator=g) / 10.0
    steps = 100
    batches = []
    for _ in range(steps):
        obs = torch.randn(B, 100, generator=g)
        obs[:, 48:] = obs[:, 48:] * 0.3 + 1.0  # height scan: positive terrain heights
        act = torch.tanh(obs @ teacher) * 2.0  # joint-position offsets (rad)
        batches.append((obs, act))
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    return dict(model=policy, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
