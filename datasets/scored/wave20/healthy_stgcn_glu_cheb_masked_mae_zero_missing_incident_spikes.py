"""Healthy: STGCN (Yu et al. 2018) traffic-speed forecaster trained with a masked MAE in mph.

Looks alarming: following the DCRNN / Graph WaveNet recipe the network predicts
z-scored speeds, the output is inverse-transformed inside the model and the loss is
the MAE in raw mph with zero readings treated as missing (masked_mae, null_val=0).
So the loss is in mph (about 10 at the start, a few mph later); the number of valid entries changes from batch to
batch (random dropped readings and, in some batches, whole sensors offline reporting
0 mph), and batches that contain a traffic incident (a sudden, spatially spreading
slowdown) give loss spikes of roughly twice the running level. The temporal GLU gates
(sigmoid) and the Chebyshev graph convolutions are well-scaled; the spikes recover
and the trend is steadily downward.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "STGCN (Yu, Yin, Zhu, IJCAI 2018) on PeMSD7; masked_mae with null_val=0 from DCRNN/Graph WaveNet utils"


class TemporalGLU(nn.Module):
    def __init__(self, c_in, c_out, kt):
        super().__init__()
        self.conv = nn.Conv2d(c_in, 2 * c_out, (kt, 1))
        self.res = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()
        self.kt = kt
        self.gate = nn.Sigmoid()

    def forward(self, x):  # x: (B, C, T, N)
        p, q = self.conv(x).chunk(2, dim=1)
        return (p + self.res(x)[:, :, self.kt - 1:]) * self.gate(q)


class ChebConv(nn.Module):
    def __init__(self, c, K, L_tilde):
        super().__init__()
        self.register_buffer("L", L_tilde)
        self.K = K
        self.theta = nn.Linear(c * K, c)

    def forward(self, x):  # (B, C, T, N)
        xs = [x]
        if self.K > 1:
            xs.append(torch.einsum("nm,bctm->bctn", self.L, x))
        for _ in range(2, self.K):
            xs.append(2 * torch.einsum("nm,bctm->bctn", self.L, xs[-1]) - xs[-2])
        h = torch.cat(xs, 1).permute(0, 2, 3, 1)
        return self.theta(h).permute(0, 3, 1, 2)


class STBlock(nn.Module):
    def __init__(self, c_in, c_t, c_s, kt, K, L, N):
        super().__init__()
        self.t1 = TemporalGLU(c_in, c_t, kt)
        self.proj = nn.Conv2d(c_t, c_s, 1)
        self.cheb = ChebConv(c_s, K, L)
        self.relu = nn.ReLU()
        self.t2 = TemporalGLU(c_s, c_t, kt)
        self.norm = nn.LayerNorm([N, c_t])

    def forward(self, x):
        h = self.t2(self.relu(self.cheb(self.proj(self.t1(x)))))
        return self.norm(h.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class STGCN(nn.Module):
    def __init__(self, L, N, T_in, horizon, c, kt, K, n_blocks, mean, std):
        super().__init__()
        blocks, c_in, T = [], 1, T_in
        for _ in range(n_blocks):
            blocks.append(STBlock(c_in, c, c // 2, kt, K, L, N))
            c_in, T = c, T - 2 * (kt - 1)
        self.blocks = nn.Sequential(*blocks)
        self.out_t = TemporalGLU(c, c, T)
        self.out = nn.Linear(c, horizon)
        self.mean, self.std = mean, std

    def forward(self, x):  # x: (B, T, N) z-scored
        h = self.out_t(self.blocks(x.unsqueeze(1)))  # (B, c, 1, N)
        y = self.out(h.squeeze(2).transpose(1, 2)).transpose(1, 2)  # (B, horizon, N)
        return y * self.std + self.mean  # inverse transform -> mph


def masked_mae(pred, target, null_val=0.0):
    mask = (target != null_val).float()
    mask = mask / mask.mean()
    return ((pred - target).abs() * mask).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    N = [20, 16, 24][seed % 3]
    c = [16, 24, 16][seed % 3]
    n_blocks = [2, 1, 2][seed % 3]
    K = [3, 2, 3][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = [150, 120, 160][seed % 3]
    lr = [3e-3, 2e-3, 2e-3][seed % 3]
    T_in, horizon, kt = 12, 3, 3
    pos = torch.rand(N, 2, generator=g)
    d = torch.cdist(pos, pos)
    W = torch.exp(-(d / 0.3) ** 2) * (d < 0.5).float()
    W.fill_diagonal_(0)
    deg = W.sum(1)
    dinv = deg.clamp_min(1e-6).pow(-0.5)
    Lap = torch.eye(N) - dinv[:, None] * W * dinv[None, :]
    lam = torch.linalg.eigvalsh(Lap).max()
    L_tilde = 2 * Lap / lam - torch.eye(N)

    free = 55 + 10 * torch.rand(N, generator=g)  # free-flow speed per sensor
    # long synthetic series: daily rush hours + diffusion-smoothed noise + incidents
    S = 2000
    t = torch.arange(S).float()
    rush = torch.exp(-((t % 288 - 100) / 20) ** 2) + torch.exp(-((t % 288 - 210) / 25) ** 2)
    sens = 0.5 + torch.rand(N, generator=g)
    speed = free[None] - 25 * rush[:, None] * sens[None]
    noise = torch.randn(S, N, generator=g)
    P = W / deg.clamp_min(1e-6)[:, None]
    speed = speed + 2.0 * (noise + noise @ P.t())
    mean, std = speed.mean().item(), speed.std().item()

    batches = []
    for i in range(steps):
        starts = torch.randint(0, S - T_in - horizon, (bs,), generator=g)
        win = torch.stack([speed[s:s + T_in + horizon] for s in starts.tolist()]).clone()
        if i % 9 == 4:  # incident: sudden slowdown spreading from one sensor
            src = int(torch.randint(0, N, (1,), generator=g))
            spread = torch.exp(-(d[src] / 0.25) ** 2)
            win[:, T_in - 4:] -= 30 * spread[None, None, :]
        drop = torch.rand(win.shape, generator=g) < 0.05
        win[drop] = 0.0
        if i % 5 == 2:  # a sensor offline for the whole batch reports 0 mph
            win[:, :, int(torch.randint(0, N, (1,), generator=g))] = 0.0
        x = (win[:, :T_in] - mean) / std
        y = win[:, T_in:]
        batches.append((x, y))

    model = STGCN(L_tilde, N, T_in, horizon, c, kt, K, n_blocks, mean, std)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=masked_mae, batches=batches, steps=steps)
