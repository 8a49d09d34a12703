"""Semi-gradient TD(0) Q-learning (DQN without a separate target network) fitted on a fixed
replay buffer of a small synthetic linear MDP. The bootstrapped target r + gamma * max_a Q(s', a)
is produced by the same network (detached) that is being trained, so every SGD step also moves
the target. With the step size copied from a supervised-regression recipe (lr ~0.7-0.9 with
momentum), each update overshoots, the greedy max in the target amplifies the overshoot and the
Q values blow up geometrically (the "deadly triad" divergence) until the TD loss is inf/NaN.
The fixed run only lowers the learning rate."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Deadly-triad divergence of off-policy semi-gradient Q-learning with function "
          "approximation (Sutton & Barto ch. 11; van Hasselt et al. 2018 'Deep RL and the Deadly "
          "Triad'); common DQN forum reports of Q values exploding to NaN with a too-large SGD lr")


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions, width, depth):
        super().__init__()
        layers, d = [], obs_dim
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.torso = nn.Sequential(*layers)
        self.q_head = nn.Linear(d, n_actions)

    def forward(self, obs, act, next_obs):
        q = self.q_head(self.torso(obs))
        q_sa = q.gather(1, act.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            q_next = self.q_head(self.torso(next_obs)).max(dim=1).values
        return {"q_sa": q_sa, "q_next": q_next}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    obs_dim, n_actions, gamma = 6, 4, 0.6
    width = [32, 48, 64][seed % 3]
    depth = [2, 2, 3][seed % 3]
    batch = [64, 128, 96][seed % 3]
    steps = [120, 150, 140][seed % 3]
    lr = 0.01 if fixed else [0.9, 0.8, 0.7][seed % 3]

    A = torch.randn(obs_dim, obs_dim, generator=g) * 0.4
    W_r = torch.randn(n_actions, obs_dim, generator=g)
    n_buf = 2048
    s = torch.randn(n_buf, obs_dim, generator=g)
    a = torch.randint(0, n_actions, (n_buf,), generator=g)
    r = (s * W_r[a]).sum(1) * 0.5 + 0.1 * torch.randn(n_buf, generator=g)
    s2 = s @ A.T + 0.1 * torch.randn(n_buf, obs_dim, generator=g)
    done = (torch.rand(n_buf, generator=g) < 0.1).float()

    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_buf, (batch,), generator=g)
        batches.append(((s[idx], a[idx], s2[idx]), {"reward": r[idx], "done": done[idx]}))

    model = QNet(obs_dim, n_actions, width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, y):
        target = y["reward"] + gamma * (1.0 - y["done"]) * out["q_next"]
        return ((out["q_sa"] - target.detach()) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
