"""TD3-style twin critic regressed onto fixed bootstrap targets r + gamma * Q_target from an offline
replay buffer. One logged transition carries reward = +inf (a simulator divided by a zero timestep
when an episode was reset), and the minibatch containing it makes the TD target inf, so the critic's
MSE is inf and backward fills every weight with NaN. Fix: filter non-finite transitions out of the
sampled batch (the rest of the data and recipe unchanged)."""
import torch, torch.nn as nn
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "TD3/SAC offline replay buffers: inf/NaN reward from simulator resets (e.g. d4rl / gym MuJoCo issue reports of NaN critic loss)"
class TwinCritic(nn.Module):
    def __init__(s, so, a, h):
        super().__init__()
        s.q1 = nn.Sequential(nn.Linear(so + a, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
        s.q2 = nn.Sequential(nn.Linear(so + a, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
    def forward(s, obs, act):
        sa = torch.cat([obs, act], -1); return s.q1(sa).squeeze(-1), s.q2(sa).squeeze(-1)
def loss_fn(out, target):
    q1, q2 = out; return ((q1 - target) ** 2).mean() + ((q2 - target) ** 2).mean()
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    so, a, h = 6, 2, 32 + 16 * seed
    steps, bs = 100 + 20 * seed, 64
    bad_step = 25 + 15 * seed
    model = TwinCritic(so, a, h)
    W = torch.randn(so + a, generator=g) * 0.5
    batches = []
    for t in range(steps):
        obs = torch.randn(bs, so, generator=g); act = torch.rand(bs, a, generator=g) * 2 - 1
        r = torch.tanh(torch.cat([obs, act], -1) @ W) + 0.1 * torch.randn(bs, generator=g)
        q_next = 0.5 * torch.cos(obs[:, 0]) + 0.2 * act[:, 1]
        if t == bad_step: r[7] = float("inf")
        target = r + 0.9 * q_next
        if fixed:
            keep = torch.isfinite(target); obs, act, target = obs[keep], act[keep], target[keep]
        batches.append(((obs, act), target))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
