"""Value network of a PPO-style agent fitted by regression to Monte-Carlo returns computed from a
fixed buffer of synthetic transitions.  The usual PPO recipe initialises hidden layers with
orthogonal(gain=sqrt(2)) and only the *policy* output layer with gain 0.01; here the init helper was
called with std=0.01 for every layer of the critic as well.  Each tanh layer then multiplies the
signal by ~0.01, so after three hidden layers the features feeding the value head are ~1e-6 of the
input scale and the backward signal to the first layers is attenuated just as much.  Under SGD the
critic only fits its output bias (the returns are standardised, so that is worth nothing) and the
value loss plateaus from step 0.  Re-initialising with the intended gains (sqrt(2) hidden, 1.0
value head) is the only change in the fixed run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "critic.0"
SOURCE = ("CleanRL/OpenAI-baselines PPO layer_init(std=...) helper: orthogonal gain sqrt(2) for hidden, "
          "0.01 for the policy head, 1.0 for the value head; bug pattern: the policy-head std applied "
          "to every critic layer")

OBS, HID = 10, 64


def layer_init(layer, std):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class Critic(nn.Module):
    def __init__(self, hidden_std, head_std):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(OBS, HID), hidden_std), nn.Tanh(),
            layer_init(nn.Linear(HID, HID), hidden_std), nn.Tanh(),
            layer_init(nn.Linear(HID, HID), hidden_std), nn.Tanh(),
            layer_init(nn.Linear(HID, 1), head_std))

    def forward(self, obs):
        return self.critic(obs).squeeze(-1)


def make_returns(g, n_traj=64, T=40, gamma=0.95):
    """Fixed synthetic transitions: a noisy linear system with a quadratic-ish reward."""
    A = torch.eye(OBS) * 0.9 + 0.05 * torch.randn(OBS, OBS, generator=g)
    s = torch.randn(n_traj, OBS, generator=g)
    states, rewards = [], []
    for _ in range(T):
        r = torch.tanh(s[:, 0] + 0.5 * s[:, 1] * s[:, 2]) - 0.1 * (s ** 2).mean(-1)
        states.append(s); rewards.append(r)
        s = s @ A.T + 0.3 * torch.randn(n_traj, OBS, generator=g)
    ret = torch.zeros(n_traj)
    returns = []
    for r in reversed(rewards):
        ret = r + gamma * ret
        returns.append(ret)
    returns.reverse()
    S, G = torch.cat(states), torch.cat(returns)
    return S, (G - G.mean()) / G.std()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    S, G = make_returns(g)
    steps, bs = 200, 256
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, S.shape[0], (bs,), generator=g)
        batches.append((S[idx], G[idx]))
    model = Critic(hidden_std=math.sqrt(2) if fixed else 0.01, head_std=1.0 if fixed else 0.01)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
