"""NoisyNet DQN (Fortunato et al. 2018) fitting TD targets under float16 autocast with a working
GradScaler.  HEALTHY.

Data: a synthetic MDP with 10-D continuous state features and 4 actions; transitions (s, a, s', r)
with targets y = r + gamma * max_a' Q*(s', a') from a fixed "target network" (the exact Q* of the
synthetic task), i.e. fitted-Q regression.  Model: MLP torso + factorised-Gaussian NoisyLinear
layers (fresh noise every forward from the module's own generator), Huber loss on Q(s, a), Adam.
The run uses torch.autocast(float16) and torch.amp.GradScaler with init_scale = 2**24.

Why it looks alarming but is healthy: the scaled backward overflows float16 in the first steps, so
the scaler finds inf gradients, SKIPS those optimizer steps (exactly-zero parameter updates) and
halves its scale until the gradients fit -- then it trains normally and periodically grows the scale
again, producing an occasional skipped step later on.  The noisy layers also make the loss jitter
from step to step.  The loss itself is always finite and decreases.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Noisy Networks for Exploration (Fortunato et al. 2018), factorised Gaussian noise; "
          "PyTorch AMP docs: GradScaler skips steps with inf/NaN gradients and lowers the scale "
          "(dynamic loss scaling, Micikevicius et al. 2018)")


class NoisyLinear(nn.Module):
    def __init__(self, in_f, out_f, gen, sigma0=0.5):
        super().__init__()
        self.in_f, self.out_f, self.gen = in_f, out_f, gen
        bound = 1 / math.sqrt(in_f)
        self.mu_w = nn.Parameter(torch.empty(out_f, in_f).uniform_(-bound, bound))
        self.mu_b = nn.Parameter(torch.empty(out_f).uniform_(-bound, bound))
        self.sigma_w = nn.Parameter(torch.full((out_f, in_f), sigma0 / math.sqrt(in_f)))
        self.sigma_b = nn.Parameter(torch.full((out_f,), sigma0 / math.sqrt(in_f)))

    @staticmethod
    def _f(x):
        return x.sign() * x.abs().sqrt()

    def forward(self, x):
        eps_in = self._f(torch.randn(self.in_f, generator=self.gen))
        eps_out = self._f(torch.randn(self.out_f, generator=self.gen))
        w = self.mu_w + self.sigma_w * torch.outer(eps_out, eps_in)
        b = self.mu_b + self.sigma_b * eps_out
        return F.linear(x, w, b)


class NoisyDQN(nn.Module):
    def __init__(self, obs_dim, width, n_actions, gen):
        super().__init__()
        self.torso = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU())
        self.noisy1 = NoisyLinear(width, width, gen)
        self.noisy2 = NoisyLinear(width, n_actions, gen)

    def forward(self, obs, actions):
        q = self.noisy2(F.relu(self.noisy1(self.torso(obs))))
        return q.gather(1, actions.unsqueeze(1)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    obs_dim, n_actions = 10, 4
    width = [128, 64, 96][seed % 3]
    batch = [64, 128, 96][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    gamma = 0.9
    steps = 200
    Wq = torch.randn(n_actions, obs_dim, generator=g) / math.sqrt(obs_dim)
    A = torch.randn(n_actions, obs_dim, obs_dim, generator=g) * 0.3 / math.sqrt(obs_dim)

    def q_star(s):
        return 3.0 * torch.tanh(s @ Wq.T) + 1.0

    batches = []
    for _ in range(steps):
        s = torch.randn(batch, obs_dim, generator=g)
        a = torch.randint(0, n_actions, (batch,), generator=g)
        s2 = torch.tanh(torch.einsum("bij,bj->bi", A[a], s)) * 1.5 + 0.1 * torch.randn(batch, obs_dim, generator=g)
        r = torch.sin(s[:, 0] * (a + 1)) + 0.1 * torch.randn(batch, generator=g)
        y = r + gamma * q_star(s2).max(-1).values
        batches.append(((s, a), y))

    torch.manual_seed(seed)
    model = NoisyDQN(obs_dim, width, n_actions, torch.Generator().manual_seed(seed + 7))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=50)
    return {"model": model, "optimizer": opt, "loss_fn": lambda q, y: F.smooth_l1_loss(q, y),
            "batches": batches, "steps": steps, "amp_dtype": torch.float16, "scaler": scaler}
