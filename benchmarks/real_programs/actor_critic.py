"""pytorch/examples reinforcement_learning/actor_critic.py: one network with an actor head and a
critic head (4-128 ReLU, 128-2 softmax, 128-1), Adam (lr 3e-2), gamma 0.99; one update per
episode, its loss the sum over the episode of the policy losses and the smooth-L1 value losses,
so it grows as the agent balances longer. Changes: CartPole written out (_cartpole.py, episodes
capped at 200 steps), a fixed number of episodes instead of running until solved."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.distributions import Categorical

from ._cartpole import CartPole

NAME = "actor_critic"
EXPECT = "healthy"
STEPS = 100
EXAMPLE = "reinforcement_learning/actor_critic.py"

GAMMA, SEED = 0.99, 543
SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class Policy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)
        self.saved_actions: list[Any] = []
        self.rewards: list[float] = []

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    env = CartPole(seed=SEED)
    torch.manual_seed(SEED)
    model = Policy()
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    eps = np.finfo(np.float32).eps.item()
    losses: list[float] = []

    def select_action(state: np.ndarray) -> int:
        probs, state_value = model(torch.from_numpy(state).float())
        m = Categorical(probs)
        action = m.sample()
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return int(action.item())

    def finish_episode() -> None:
        R = 0.0
        policy_losses, value_losses, returns = [], [], []
        for r in model.rewards[::-1]:
            R = r + GAMMA * R
            returns.insert(0, R)
        ret = torch.tensor(returns)
        ret = (ret - ret.mean()) / (ret.std() + eps)
        for (log_prob, value), R_t in zip(model.saved_actions, ret, strict=True):
            advantage = R_t - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R_t])))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        dbg.record_loss(loss)
        optimizer.step()
        losses.append(loss.item())
        del model.rewards[:]
        del model.saved_actions[:]

    with dbg_factory(model) as dbg:
        for _ in range(steps):  # episodes
            state, _ = env.reset()
            for _t in range(1, 10000):
                action = select_action(state)
                state, reward, terminated, truncated, _ = env.step(action)
                model.rewards.append(reward)
                if terminated or truncated:
                    break
            finish_episode()
    return losses
