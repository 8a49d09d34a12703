"""pytorch/examples reinforcement_learning/reinforce.py: the policy (4-128 linear, dropout 0.6,
ReLU, 128-2 linear, softmax), Adam (lr 1e-2), gamma 0.99; one update per episode, its loss the
sum over the episode of -log_prob x (normalised discounted return): episodes of varying length.
Changes: CartPole written out (_cartpole.py, episodes capped at 200 steps), a fixed number of
episodes instead of running until solved."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.distributions import Categorical

from ._cartpole import CartPole

NAME = "reinforce"
EXPECT = "healthy"
STEPS = 200
EXAMPLE = "reinforcement_learning/reinforce.py"

GAMMA, SEED = 0.99, 543


class Policy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs: list[torch.Tensor] = []
        self.rewards: list[float] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    env = CartPole(seed=SEED)
    torch.manual_seed(SEED)
    policy = Policy()
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    losses: list[float] = []

    def select_action(state: np.ndarray) -> int:
        probs = policy(torch.from_numpy(state).float().unsqueeze(0))
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return int(action.item())

    def finish_episode() -> None:
        R = 0.0
        returns: deque[float] = deque()
        for r in policy.rewards[::-1]:
            R = r + GAMMA * R
            returns.appendleft(R)
        ret = torch.tensor(returns)
        ret = (ret - ret.mean()) / (ret.std() + eps)
        policy_loss = [-log_prob * R for log_prob, R in zip(policy.saved_log_probs, ret,
                                                           strict=True)]
        optimizer.zero_grad()
        loss = torch.cat(policy_loss).sum()
        loss.backward()
        dbg.record_loss(loss)
        optimizer.step()
        losses.append(loss.item())
        del policy.rewards[:]
        del policy.saved_log_probs[:]

    with dbg_factory(policy) as dbg:
        for _ in range(steps):  # episodes
            state, _ = env.reset()
            for _t in range(1, 10000):
                action = select_action(state)
                state, reward, terminated, truncated, _ = env.step(action)
                policy.rewards.append(reward)
                if terminated or truncated:
                    break
            finish_episode()
    return losses
