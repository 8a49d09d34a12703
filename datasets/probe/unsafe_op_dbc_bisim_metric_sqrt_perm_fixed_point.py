"""Deep Bisimulation for Control style encoder + Q-head on a fixed replay buffer. The bisim loss
pairs sample i with sample perm[i] of a random in-batch permutation and regresses
sqrt(sum((z_i - z_perm_i)^2)) onto |r_i - r_j| + gamma * d(next_i, next_j). About 63% of random
permutations have a fixed point (perm[i] == i): that distance is exactly 0, its forward value is
fine but sqrt backward is 0/0 = NaN, Adam writes it into the weights and the next loss is NaN.
fixed=True adds eps inside the sqrt."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None  # the sqrt lives in the loss function, not in a module
SOURCE = ("Zhang et al. 2021 'Learning Invariant Representations for RL without Reconstruction' "
          "(DBC, bisim_agent.update_encoder: h2 = h[np.random.permutation(B)], sqrt of squared "
          "latent differences) and the MICo code's safe _sqrt(x, eps); pytorch/pytorch issues on "
          "NaN gradient of sqrt/norm at zero distance")

GAMMA = 0.9
N_ACT = 5
OBS_DIM = 10  # pos(2) vel(2) goal(2) distractors(4)


def _point_mass_buffer(gen, n):
    pos = torch.rand(n, 2, generator=gen) * 2 - 1
    vel = torch.randn(n, 2, generator=gen) * 0.3
    goal = torch.rand(n, 2, generator=gen) * 2 - 1
    dis = torch.randn(n, 4, generator=gen)
    act = torch.randint(0, N_ACT, (n,), generator=gen)
    acc = torch.tensor([[0., 0.], [1., 0.], [-1., 0.], [0., 1.], [0., -1.]])[act]
    nvel = 0.8 * vel + 0.2 * acc
    npos = (pos + 0.2 * nvel).clamp(-1, 1)
    ndis = 0.9 * dis + 0.44 * torch.randn(n, 4, generator=gen)   # task-irrelevant noise
    rew = -(npos - goal).norm(dim=1)
    obs = torch.cat([pos, vel, goal, dis], 1)
    nobs = torch.cat([npos, nvel, goal, ndis], 1)
    return obs, act, rew, nobs


class Encoder(nn.Module):
    def __init__(self, d_in, d_z=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, 128)
        self.fc2 = nn.Linear(128, d_z)
        self.ln = nn.LayerNorm(d_z)

    def forward(self, x):
        return torch.tanh(self.ln(self.fc2(F.relu(self.fc1(x)))))


class BisimQAgent(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(OBS_DIM)
        self.q_head = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, N_ACT))
        self.target_encoder = copy.deepcopy(self.encoder)
        self.target_q = copy.deepcopy(self.q_head)
        for p in list(self.target_encoder.parameters()) + list(self.target_q.parameters()):
            p.requires_grad_(False)

    @torch.no_grad()
    def soft_update(self, tau=0.02):
        for online, target in ((self.encoder, self.target_encoder), (self.q_head, self.target_q)):
            for p, tp in zip(online.parameters(), target.parameters(), strict=True):
                tp.mul_(1 - tau).add_(tau * p)

    def forward(self, obs, act, next_obs):
        z = self.encoder(obs)
        q_sa = self.q_head(z).gather(1, act.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            z_next = self.target_encoder(next_obs)
            q_next = self.target_q(z_next).max(1).values
        return q_sa, q_next, z, z_next


def make_loss(fixed):
    eps = 1e-8 if fixed else 0.0

    def dbc_loss(out, target):
        q_sa, q_next, z, z_next = out
        rew, perm = target
        td = F.smooth_l1_loss(q_sa, rew + GAMMA * q_next)
        # bisimulation metric loss: pair each sample with a random other sample of the batch
        z2 = z[perm]
        z_dist = torch.sqrt(((z - z2) ** 2).sum(-1) + eps)
        with torch.no_grad():
            r_dist = (rew - rew[perm]).abs()
            next_dist = torch.sqrt(((z_next - z_next[perm]) ** 2).sum(-1))
            bisim = r_dist + GAMMA * next_dist
        metric = (z_dist - bisim).pow(2).mean()
        return td + 0.5 * metric

    return dbc_loss


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps, batch = 200, 128
    obs, act, rew, nobs = _point_mass_buffer(gen, 20000)
    model = BisimQAgent()
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=5e-4)
    optimizer.register_step_post_hook(lambda opt, a, k: model.soft_update())
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, obs.shape[0], (batch,), generator=gen)
        perm = torch.randperm(batch, generator=gen)
        batches.append(((obs[idx], act[idx], nobs[idx]), (rew[idx], perm)))
    return dict(model=model, optimizer=optimizer, loss_fn=make_loss(fixed), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
